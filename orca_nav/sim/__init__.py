"""The fleet simulator, scenarios and the demo (imports orca_nav.ros and orca_nav.core)."""
