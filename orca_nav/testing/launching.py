"""
Run a launch file as ``ros2 launch`` does, for the tests: launch's LaunchService in a process.

``ros2 launch <file> name:=value ...`` (ros2launch.api.launch_a_launch_file) makes a
LaunchService with the arguments as its argv and includes the file with them as the
IncludeLaunchDescription's ``launch_arguments``; :data:`RUNNER` does exactly that, so the file
sees what it sees under ``ros2 launch``. It needs ``launch`` (and the files ``launch_ros``),
which are not on PyPI: the tests that use it skip where they are missing.

:func:`package_prefix` makes an ament prefix in which the package under test (this source
tree) is ``orca_nav``: its launch and config folders, and its executables in lib/orca_nav, so
that ``Node(package='orca_nav', ...)`` and ``get_package_share_directory('orca_nav')`` find
this tree, installed or not. :class:`Launch` is one such run (its own process group).
"""

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

ROOT = Path(__file__).resolve().parents[2]
# What ros2 launch does with `ros2 launch <file> name:=value ...` (without its CLI options).
RUNNER = """
import sys
import launch
from launch.launch_description_sources import AnyLaunchDescriptionSource
path, argv = sys.argv[1], sys.argv[2:]
service = launch.LaunchService(argv=argv)
service.include_launch_description(launch.LaunchDescription([
    launch.actions.IncludeLaunchDescription(
        AnyLaunchDescriptionSource(path),
        launch_arguments=[tuple(a.split(':=', 1)) for a in argv if ':=' in a])]))
sys.exit(service.run())
"""
EXECUTABLES = {'orca_nav_node': 'orca_nav.ros.main', 'orca_nav_sim': 'orca_nav.sim.node',
               'orca_nav_demo': 'orca_nav.sim.demo'}


def package_prefix(folder):
    """
    Make an ament prefix under ``folder`` whose package ``orca_nav`` is this source tree.

    Returns the prefix; put it first in AMENT_PREFIX_PATH (and the tree on PYTHONPATH).
    """
    prefix = Path(folder) / 'prefix'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True, exist_ok=True)
    (index / 'orca_nav').write_text('')
    share = prefix / 'share' / 'orca_nav'
    share.mkdir(parents=True, exist_ok=True)
    for name in ('launch', 'config', 'package.xml'):
        if not (share / name).exists():
            (share / name).symlink_to(ROOT / name)
    lib = prefix / 'lib' / 'orca_nav'
    lib.mkdir(parents=True, exist_ok=True)
    for name, module in EXECUTABLES.items():
        script = lib / name
        # As setuptools' console scripts: the guard keeps multiprocessing's forkserver (the
        # node's planning worker) from running main() again when it imports __main__.
        script.write_text(f'#!{sys.executable}\nimport sys\nfrom {module} import main\n'
                          "if __name__ == '__main__':\n    sys.exit(main())\n")
        script.chmod(0o755)
    return prefix


def launch_env(env, prefix):
    """Return ``env`` with the prefix first in AMENT_PREFIX_PATH and this tree on PYTHONPATH."""
    env = dict(env)
    env['AMENT_PREFIX_PATH'] = os.pathsep.join(
        [str(prefix)] + [p for p in env.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p])
    env['PYTHONPATH'] = os.pathsep.join(
        [str(ROOT)] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    return env


class Launch:
    """One ``ros2 launch`` of a file (by path), in a process group of its own; output in a log."""

    def __init__(self, path, arguments, env, log_path):
        """Start launching ``path`` with ``arguments`` (['name:=value', ...])."""
        self.log_path = Path(log_path)
        self._log = open(self.log_path, 'w')
        self.proc = subprocess.Popen(
            [sys.executable, '-c', RUNNER, str(path)] + list(arguments), env=env,
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)

    def output(self):
        """Return what the launch has printed so far."""
        return self.log_path.read_text(errors='replace')

    def wait_for(self, text, timeout):
        """Wait until the output has ``text``; False if the launch ended or time ran out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output():
                return True
            if self.proc.poll() is not None:
                return text in self.output()
            time.sleep(0.1)
        return False

    def wait(self, timeout):
        """Return the launch's exit code, None if it still runs after ``timeout`` s."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=15.0):
        """Ctrl-C (SIGINT to the group), then SIGKILL to the group; return the exit code."""
        if self.proc.poll() is None:
            self._signal_group(signal.SIGINT)
            if self.wait(timeout) is None:
                self._signal_group(signal.SIGKILL)
                self.proc.wait()
        self._signal_group(signal.SIGKILL)  # anything of it left (orphans keep the group)
        self._log.close()
        return self.proc.returncode

    def _signal_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass
