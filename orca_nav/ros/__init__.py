"""ROS 2 adapters: the node, its parameters, message conversions and launch planning."""
