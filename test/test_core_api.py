"""
The public API of orca_nav.core: compute_velocities, Obstacles, and their errors.

With orca_nav.testing.simulation.Simulation, RVO2's interface on top of them.
"""

import math

import numpy as np
from orca_nav.core import compute_velocities, Obstacles, validate_params
from orca_nav.testing.simulation import Simulation
import pytest

PARAMS = {'time_step': 0.25, 'neighbor_dist': 15.0, 'max_neighbors': 10, 'time_horizon': 10.0,
          'time_horizon_obst': 10.0}


def make_sim(**overrides):
    """RVO2's Circle-scene simulation parameters, with overrides."""
    kwargs = dict(PARAMS, radius=1.5, max_speed=2.0)
    kwargs.update(overrides)
    return Simulation(**kwargs)


def velocities_of(positions, **overrides):
    """compute_velocities on agents at rest that prefer +x, with overrides."""
    positions = np.asarray(positions, dtype=float)
    n = positions.shape[0]
    kwargs = dict(PARAMS, positions=positions, velocities=np.zeros((n, 2)),
                  pref_velocities=np.tile([1.0, 0.0], (n, 1)), radius=0.5, max_speed=1.0)
    kwargs.update(overrides)
    return compute_velocities(**kwargs)


def test_add_agent_returns_consecutive_indices_and_defaults():
    """Indices 0, 1, 2, ...; constructor defaults apply; positions are (N, 2) floats."""
    sim = make_sim()
    assert sim.num_agents == 0
    assert sim.positions.shape == (0, 2)
    assert [sim.add_agent((float(k), 0.0)) for k in range(3)] == [0, 1, 2]
    assert sim.num_agents == 3
    for arr in (sim.positions, sim.velocities):
        assert isinstance(arr, np.ndarray) and arr.shape == (3, 2) and arr.dtype == float
    np.testing.assert_array_equal(sim.positions, [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    np.testing.assert_array_equal(sim.velocities, np.zeros((3, 2)))
    np.testing.assert_array_equal(sim.radius, [1.5, 1.5, 1.5])
    np.testing.assert_array_equal(sim.max_speed, [2.0, 2.0, 2.0])


def test_add_agent_keyword_overrides():
    """radius=, max_speed= and velocity= land in that agent's row only."""
    sim = make_sim()
    sim.add_agent((0.0, 0.0))
    assert sim.add_agent((5.0, 5.0), radius=0.3, max_speed=0.7, velocity=(0.1, -0.2)) == 1
    sim.add_agent((9.0, 9.0))
    np.testing.assert_array_equal(sim.radius, [1.5, 0.3, 1.5])
    np.testing.assert_array_equal(sim.max_speed, [2.0, 0.7, 2.0])
    np.testing.assert_array_equal(sim.velocities, [[0.0, 0.0], [0.1, -0.2], [0.0, 0.0]])
    np.testing.assert_array_equal(sim.positions[1], [5.0, 5.0])


def test_add_obstacle_two_vertices_is_one_segment_solid_from_both_sides():
    """Two vertices make one segment (two opposite edges) that blocks agents on either side."""
    sim = Simulation(time_step=0.25, neighbor_dist=5.0, max_neighbors=10, time_horizon=2.0,
                     time_horizon_obst=2.0, radius=0.3, max_speed=1.0)
    assert sim.add_obstacle([(-10.0, 0.0), (10.0, 0.0)]) == 0
    ob = sim.obstacles
    assert ob.num_vertices == 2
    np.testing.assert_array_equal(ob.point, [[-10.0, 0.0], [10.0, 0.0]])
    np.testing.assert_array_equal(ob.next, [1, 0])
    np.testing.assert_array_equal(ob.prev, [1, 0])
    assert sim.add_obstacle([(20.0, 0.0), (21.0, 0.0), (21.0, 1.0)]) == 2
    assert sim.obstacles.num_vertices == 5
    # One agent below, one above, both driving straight at the segment.
    sim.add_agent((0.0, -2.0))
    sim.add_agent((3.0, 2.0))
    for _ in range(60):
        sim.set_preferred_velocities([[0.0, 1.0], [0.0, -1.0]])
        sim.step()
        assert sim.positions[0, 1] < 0.0 and sim.positions[1, 1] > 0.0
    # They got close, and stopped short of the segment by about their radius.
    assert -0.4 < sim.positions[0, 1] <= -0.3 + 1e-6
    assert 0.3 - 1e-6 <= sim.positions[1, 1] < 0.4


def test_set_preferred_velocities_shape_is_checked():
    """An array of the wrong shape is refused with ValueError; a good one is stored."""
    sim = make_sim()
    sim.add_agent((0.0, 0.0))
    sim.add_agent((10.0, 0.0))
    with pytest.raises(ValueError, match=r'\(2, 2\).*\(3, 2\)'):
        sim.set_preferred_velocities(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r'\(2, 2\).*\(2,\)'):
        sim.set_preferred_velocities([1.0, 0.0])
    sim.set_preferred_velocities([[1.0, 0.0], [-1.0, 0.5]])
    np.testing.assert_array_equal(sim.pref_velocities, [[1.0, 0.0], [-1.0, 0.5]])


def test_step_computes_all_velocities_then_moves():
    """positions_after == positions_before + velocities_after * time_step, velocities first."""
    sim = make_sim()
    angles = np.linspace(0.0, 2.0 * math.pi, 6, endpoint=False)
    for a in angles:
        sim.add_agent((20.0 * math.cos(a), 20.0 * math.sin(a)))
    goals = -sim.positions
    for k in range(30):
        to_goal = goals - sim.positions
        norm = np.maximum(np.hypot(to_goal[:, 0], to_goal[:, 1]), 1.0)
        sim.set_preferred_velocities(to_goal / norm[:, None])
        before = sim.positions.copy()
        expected = sim.compute_new_velocities()
        t_before = sim.global_time
        sim.step()
        np.testing.assert_allclose(sim.velocities, expected, rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(sim.positions, before + sim.velocities * 0.25, rtol=0.0,
                                   atol=1e-12)
        assert sim.global_time == pytest.approx(t_before + 0.25)
        assert np.all(np.hypot(sim.velocities[:, 0], sim.velocities[:, 1]) <= 2.0 + 1e-9)
    # The agents did move toward their goals.
    assert np.all(np.hypot(*(sim.positions - goals).T) < 40.0 - 7.0)


def test_compute_velocities_returns_finite_n_by_2():
    """A lone agent gets its preferred velocity clipped to its max speed."""
    out = velocities_of([[0.0, 0.0]], pref_velocities=[[3.0, 4.0]], max_speed=2.0)
    assert out.shape == (1, 2) and out.dtype == float
    np.testing.assert_allclose(out, [[1.2, 1.6]], atol=1e-12)
    out = velocities_of(np.zeros((0, 2)))
    assert out.shape == (0, 2)


@pytest.mark.parametrize('value', [0.0, -0.25, float('nan')])
def test_simulation_rejects_bad_time_step(value):
    """Non-positive (or NaN) time_step is named in the message with its value."""
    with pytest.raises(ValueError, match=rf'time_step.*{value!r}'):
        make_sim(time_step=value)


@pytest.mark.parametrize('value', [0.0, -1.5])
def test_simulation_rejects_bad_radius(value):
    """Non-positive radius in the constructor and in add_agent."""
    with pytest.raises(ValueError, match=rf'radius.*{value!r}'):
        make_sim(radius=value)
    sim = make_sim()
    with pytest.raises(ValueError, match=rf'radius.*{value!r}'):
        sim.add_agent((0.0, 0.0), radius=value)
    assert sim.num_agents == 0


def test_simulation_rejects_negative_max_speed():
    """Negative max_speed in the constructor and in add_agent; zero is allowed."""
    with pytest.raises(ValueError, match=r'max_speed.*-1\.0'):
        make_sim(max_speed=-1.0)
    sim = make_sim(max_speed=0.0)
    with pytest.raises(ValueError, match=r'max_speed.*-0\.5'):
        sim.add_agent((0.0, 0.0), max_speed=-0.5)
    assert sim.add_agent((0.0, 0.0)) == 0
    sim.set_preferred_velocities([[1.0, 0.0]])
    sim.step()
    np.testing.assert_array_equal(sim.positions, [[0.0, 0.0]])


def test_add_agent_rejects_nan_position():
    """A NaN coordinate is refused, naming position and showing the value."""
    sim = make_sim()
    with pytest.raises(ValueError, match=r'position.*\[nan, 1\.0\]'):
        sim.add_agent((float('nan'), 1.0))
    with pytest.raises(ValueError, match=r'velocity.*inf'):
        sim.add_agent((0.0, 1.0), velocity=(float('inf'), 0.0))
    assert sim.num_agents == 0


def test_polygon_with_fewer_than_two_vertices():
    """Obstacles.build and add_obstacle refuse polygons of one vertex (or none)."""
    with pytest.raises(ValueError, match=r'polygon 1 has 1 vertex'):
        Obstacles.build([[(0.0, 0.0), (1.0, 0.0)], [(2.0, 3.0)]])
    with pytest.raises(ValueError, match=r'polygon 0 .*shape \(0,\)'):
        Obstacles.build([[]])
    sim = make_sim()
    with pytest.raises(ValueError, match=r'polygon.*1 vertex'):
        sim.add_obstacle([(2.0, 3.0)])
    # Nothing was added by the failed call.
    assert sim.add_obstacle([(0.0, 0.0), (1.0, 0.0)]) == 0
    assert sim.obstacles.num_vertices == 2


def test_compute_velocities_rejects_nan_positions():
    """A NaN position is refused, naming positions, the row and the value."""
    pos = np.array([[0.0, 0.0], [np.nan, 2.0], [5.0, 5.0]])
    with pytest.raises(ValueError, match=r'positions.*row 1.*nan'):
        velocities_of(pos)
    with pytest.raises(ValueError, match=r'pref_velocities.*row 0.*inf'):
        velocities_of([[0.0, 0.0]], pref_velocities=[[np.inf, 0.0]])


def test_compute_velocities_rejects_bad_radius_and_max_speed():
    """Refuse radius <= 0 and max_speed < 0 per agent, showing the value."""
    with pytest.raises(ValueError, match=r'radius.*-0\.5'):
        velocities_of([[0.0, 0.0], [3.0, 0.0]], radius=[0.5, -0.5])
    with pytest.raises(ValueError, match=r'max_speed.*-2\.0'):
        velocities_of([[0.0, 0.0], [3.0, 0.0]], max_speed=[1.0, -2.0])


@pytest.mark.parametrize('name, value, pattern', [
    ('max_neighbors', -1, r'^max_neighbors.*-1'),
    ('max_neighbors', 2.5, r'^max_neighbors.*2\.5'),
    ('time_horizon', 0.0, r'^time_horizon .*0\.0'),
    ('time_horizon_obst', -3.0, r'^time_horizon_obst.*-3\.0'),
    ('neighbor_dist', float('inf'), r'^neighbor_dist.*inf'),
    ('time_step', 0, r'^time_step.*0'),
])
def test_parameters_are_validated_everywhere(name, value, pattern):
    """Simulation, compute_velocities and validate_params name the bad parameter and value."""
    with pytest.raises(ValueError, match=pattern):
        make_sim(**{name: value})
    with pytest.raises(ValueError, match=pattern):
        velocities_of([[0.0, 0.0]], **{name: value})
    with pytest.raises(ValueError, match=pattern):
        validate_params(**dict(PARAMS, **{name: value}))


def test_validate_params_returns_typed_values():
    """Good parameters come back as floats and an int."""
    out = validate_params(1, 2, np.int64(3), 4, 5)
    assert out == (1.0, 2.0, 3, 4.0, 5.0)
    assert [type(v) for v in out] == [float, float, int, float, float]
