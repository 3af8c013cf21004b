"""
Which launch arguments were given to a launch file: those of the include that loads it.

``ros2 launch <file> name:=value`` includes the file with the command line's arguments as the
IncludeLaunchDescription's ``launch_arguments``; a user's bringup includes it with its own.
Launch loads the file while that include executes, before it sets them as launch
configurations, where they mix with the including files' own. So a launch file calls
:func:`given_arguments` while it is loaded (in ``generate_launch_description``) to check only
the names given to it. launch is imported when called: the launch files only run with it.
"""

import inspect


def given_arguments():
    """
    Return the names of the launch_arguments given to the file being loaded, or None.

    None: the file is not being included (loaded by a test or by ``--show-args``), or only
    looked at (launch reading an including file's declared arguments without a context).
    """
    from launch.actions import IncludeLaunchDescription
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_name == 'try_get_launch_description_without_context':
            return None
        include, context = frame.f_locals.get('self'), frame.f_locals.get('context')
        if isinstance(include, IncludeLaunchDescription) and context is not None:
            # The innermost include executing now: the one that loads the file.
            return [perform_substitutions(context, normalize_to_list_of_substitutions(name))
                    for name, _ in include.launch_arguments]
        frame = frame.f_back
    return None
