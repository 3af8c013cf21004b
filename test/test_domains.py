"""
Every test module and benchmark that talks DDS has a ROS_DOMAIN_ID of its own.

Read from the sources with ``ast``: a module declares its domain as ``DOMAIN_ID = <int>`` or,
for several runs, ``DOMAIN_IDS = {name: <int>, ...}`` (a dict, list or tuple), at module level.
No two declarations may share a domain, none may be in the demo's random range (two modules on
one domain could hear each other when they run at the same time), and a module that starts
ROS (the ``context`` fixture, ``rclpy.init``, ``child_env``, ``ROS_DOMAIN_ID``) must declare
one. Run as a script, it prints the table of domains.
"""

import ast
from pathlib import Path

from orca_nav.sim.processes import DOMAIN_ID_RANGE

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ('test', 'benchmarks')
MAX_DOMAIN = 232  # the largest ROS_DOMAIN_ID DDS allows on Linux
# Uses of ROS that need a domain of the module's own.
ROS_MARKS = ('rclpy.init(', 'child_env(', 'ROS_DOMAIN_ID')
# conftest.py's context fixture inits rclpy on the DOMAIN_ID of the module that asks.
EXEMPT = {'test/conftest.py', 'test/test_domains.py'}


def declared_domains(source):
    """
    Return [(name, domain)] declared at module level: DOMAIN_ID and DOMAIN_IDS entries.

    >>> declared_domains('DOMAIN_ID = 7')
    [('DOMAIN_ID', 7)]
    >>> declared_domains("DOMAIN_IDS = {'a': 3, 'b': 4}")
    [('DOMAIN_IDS[a]', 3), ('DOMAIN_IDS[b]', 4)]
    """
    found = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == 'DOMAIN_ID':
            found.append((name, ast.literal_eval(node.value)))
        elif name == 'DOMAIN_IDS':
            value = ast.literal_eval(node.value)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            found += [(f'{name}[{key}]', domain) for key, domain in items]
    return found


def _is_test_or_fixture(node):
    """Whether a function definition is a test or a pytest fixture."""
    return node.name.startswith('test_') or any(
        'fixture' in ast.unparse(decorator) for decorator in node.decorator_list)


def uses_ros(source):
    """Whether a module starts ROS: the context fixture, rclpy.init, child_env, the env var."""
    if any(mark in source for mark in ROS_MARKS):
        return True
    return any(isinstance(node, ast.FunctionDef) and _is_test_or_fixture(node)
               and 'context' in [a.arg for a in node.args.args]
               for node in ast.walk(ast.parse(source)))


def modules():
    """Yield (path relative to the root, source) of every test module and benchmark."""
    for folder in SOURCES:
        for path in sorted((ROOT / folder).glob('*.py')):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def domain_table():
    """Return [(domain, 'module: name')] of every declaration, sorted by domain."""
    return sorted((domain, f'{module}: {name}') for module, source in modules()
                  for name, domain in declared_domains(source))


def test_every_declared_domain_is_unique_and_outside_the_demo_range():
    table = domain_table()
    assert len(table) >= 15, f'too few declarations found: {table}'
    users = {}
    for domain, user in table:
        users.setdefault(domain, []).append(user)
        assert isinstance(domain, int) and 0 <= domain <= MAX_DOMAIN, user
        assert not DOMAIN_ID_RANGE[0] <= domain <= DOMAIN_ID_RANGE[1], (
            f'{user}: {domain} is in the random range of the demo {DOMAIN_ID_RANGE}')
    shared = {domain: names for domain, names in users.items() if len(names) > 1}
    assert not shared, f'domains used twice: {shared}'


def test_every_module_that_starts_ros_declares_its_domain():
    missing = [module for module, source in modules()
               if uses_ros(source) and not declared_domains(source)
               and module not in EXEMPT]
    assert not missing, f'modules starting ROS without DOMAIN_ID(S): {missing}'


def test_the_check_finds_a_shared_domain():
    a = declared_domains('DOMAIN_ID = 21')
    b = declared_domains("DOMAIN_IDS = {'x': 5, 'y': 21}")
    assert {d for _, d in a} & {d for _, d in b} == {21}
    assert uses_ros('def test_x(context):\n    pass\n')
    assert uses_ros('@pytest.fixture\ndef rig(context):\n    pass\n')
    assert not uses_ros('def test_x(tmp_path):\n    pass\n')
    assert not uses_ros('def run(description, context=None):\n    pass\n')


if __name__ == '__main__':
    print('| domain | user |\n|---|---|')
    for domain, user in domain_table():
        print(f'| {domain} | `{user}` |')
