"""
The node process's middleware settings, made before ``rclpy.init`` (``orca_nav_node`` only).

A large fleet's node has thousands of entities: 1000 robots are 5000 subscriptions and 3000
publishers. Fast DDS pairs each new writer with every reader of its own participant (and each
new reader with every writer), copying the other's discovery data each time: 15 million
copies, 8-20 s of a 1000-robot start on a 2-core machine, though nothing in the node's process
reads a topic it writes. ``fastdds_profile.xml`` beside this module turns that local matching
off (Fast DDS's ``fastdds.ignore_local_endpoints``). It is used only where the user has chosen
nothing: no profiles file of their own (``FASTDDS_DEFAULT_PROFILES_FILE``, the older
``FASTRTPS_DEFAULT_PROFILES_FILE``, or ``DEFAULT_FASTDDS_PROFILES.xml`` in the working
directory, which Fast DDS loads by itself) and Fast DDS as the middleware.
"""

import os

PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fastdds_profile.xml')
PROFILE_VARIABLES = ('FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE')
CWD_PROFILE = 'DEFAULT_FASTDDS_PROFILES.xml'
FAST_DDS = ('', 'rmw_fastrtps_cpp', 'rmw_fastrtps_dynamic_cpp')


def use_node_profile(environ=None, cwd=None):
    """
    Point Fast DDS at the node's participant profile unless the user chose one; say what.

    Returns one line for the log: the profile set, or why it was not (the user's own profiles
    file or another middleware), with the cost that remains for large fleets.

    >>> env = {}
    >>> use_node_profile(env, cwd='/nonexistent').startswith('Fast DDS profile ')
    True
    >>> env['FASTDDS_DEFAULT_PROFILES_FILE'] == PROFILE
    True
    >>> use_node_profile({'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}, cwd='/nonexistent')[:21]
    'middleware rmw_cyclon'
    """
    environ = os.environ if environ is None else environ
    rmw = environ.get('RMW_IMPLEMENTATION', '')
    if rmw not in FAST_DDS:
        return f'middleware {rmw}: orca_nav sets no profile of its own'
    own = next((f'{name}={environ[name]}' for name in PROFILE_VARIABLES if environ.get(name)),
               None)
    if own is None and os.path.isfile(os.path.join(cwd or os.getcwd(), CWD_PROFILE)):
        own = f'{CWD_PROFILE} in the working directory'
    if own is not None:
        return (f'Fast DDS profile: yours ({own}); a large fleet starts faster with the '
                'participant property fastdds.ignore_local_endpoints=true in it (see '
                f'{PROFILE})')
    if not os.path.isfile(PROFILE):  # an install without the file: Fast DDS's defaults
        return f'Fast DDS profile {PROFILE} is missing: using Fast DDS defaults'
    environ[PROFILE_VARIABLES[0]] = PROFILE
    return f'Fast DDS profile {PROFILE} (the node matches no topic with itself)'
