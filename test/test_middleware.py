"""
The node process's Fast DDS profile (orca_nav.ros.middleware): no matching with itself.

A node's participant that pairs each of its writers with each of its readers spends most of a
large fleet's start on it (docs/performance.md, start-up). ``orca_nav_node`` points Fast DDS at
``fastdds_profile.xml`` unless the user chose a profile or another middleware. Checked over
real DDS on loopback (domain 87), each run in a process of its own (Fast DDS reads the profile
once per process): with the profile a participant does not hear itself but still hears another
participant, in the same process or not; without it, it hears itself.
"""

import json
import os
import subprocess
import sys

from orca_nav.ros import middleware
from orca_nav.sim.processes import child_env
import pytest

DOMAIN_ID = 87
# Run in a child process: one participant publishes and subscribes to one topic, a second one
# (another context) publishes to it too; prints how many messages of each the first heard.
LOOP = r"""
import json, sys, time
from orca_nav.ros import middleware
if sys.argv[1] == 'profile':
    middleware.use_node_profile()
import rclpy
from rclpy.context import Context
from std_msgs.msg import String
from rclpy.qos import QoSProfile, ReliabilityPolicy
qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
own, other = Context(), Context()
rclpy.init(context=own)
rclpy.init(context=other)
node = rclpy.create_node('self_talk', context=own)
peer = rclpy.create_node('peer', context=other)
heard = {'self': 0, 'peer': 0}
node.create_subscription(String, 'loop', lambda m: heard.__setitem__(m.data, heard[m.data] + 1),
                         qos)
mine = node.create_publisher(String, 'loop', qos)
theirs = peer.create_publisher(String, 'loop', qos)
from rclpy.executors import SingleThreadedExecutor
executor = SingleThreadedExecutor(context=own)
executor.add_node(node)
end = time.monotonic() + 30.0
while time.monotonic() < end and heard['peer'] < 10:
    mine.publish(String(data='self'))
    theirs.publish(String(data='peer'))
    executor.spin_once(timeout_sec=0.05)
for _ in range(20):  # what is still on its way
    executor.spin_once(timeout_sec=0.05)
print(json.dumps(heard))
"""


def _heard(mode, cwd):
    env = child_env(DOMAIN_ID)
    for name in middleware.PROFILE_VARIABLES:
        env.pop(name, None)
    out = subprocess.run([sys.executable, '-c', LOOP, mode], env=env, capture_output=True,
                         text=True, timeout=120, cwd=cwd)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_with_the_node_profile_a_participant_hears_others_but_not_itself(tmp_path):
    plain, profiled = _heard('plain', tmp_path), _heard('profile', tmp_path)
    assert plain['self'] > 0 and plain['peer'] >= 10, plain
    assert profiled['self'] == 0 and profiled['peer'] >= 10, profiled


def test_the_node_profile_is_used_only_where_the_user_chose_none(tmp_path):
    env = {}
    assert 'the node matches no topic with itself' in middleware.use_node_profile(env, tmp_path)
    assert env == {'FASTDDS_DEFAULT_PROFILES_FILE': middleware.PROFILE}
    assert os.path.isfile(middleware.PROFILE)
    for name in middleware.PROFILE_VARIABLES:
        env = {name: '/mine.xml'}
        line = middleware.use_node_profile(env, tmp_path)
        assert env == {name: '/mine.xml'}
        assert 'yours' in line and '/mine.xml' in line and 'ignore_local_endpoints' in line
    (tmp_path / middleware.CWD_PROFILE).write_text('<dds/>')
    env = {}
    assert 'working directory' in middleware.use_node_profile(env, tmp_path)
    assert env == {}
    for rmw in ('rmw_cyclonedds_cpp', 'rmw_zenoh_cpp'):
        env = {'RMW_IMPLEMENTATION': rmw}
        assert rmw in middleware.use_node_profile(env, tmp_path) and len(env) == 1


def test_an_install_without_the_profile_keeps_fast_dds_defaults(monkeypatch, tmp_path):
    monkeypatch.setattr(middleware, 'PROFILE', str(tmp_path / 'gone.xml'))
    env = {}
    assert 'missing' in middleware.use_node_profile(env, tmp_path) and env == {}


@pytest.mark.parametrize('rmw', ['', 'rmw_fastrtps_cpp', 'rmw_fastrtps_dynamic_cpp'])
def test_fast_dds_by_any_name_gets_the_profile(rmw, tmp_path):
    env = {'RMW_IMPLEMENTATION': rmw} if rmw else {}
    middleware.use_node_profile(env, tmp_path)
    assert env['FASTDDS_DEFAULT_PROFILES_FILE'] == middleware.PROFILE
