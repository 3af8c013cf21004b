"""The fleet controller: one tick of the whole fleet from arrays, no ROS."""
