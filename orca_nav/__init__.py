"""orca_nav: multi-robot ORCA collision avoidance for ROS 2 fleets."""
