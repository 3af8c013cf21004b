"""core.routes.follow: the fleet's carrots agree with the one-robot reference (testing)."""

import math

import numpy as np
from orca_nav.core.routes.follow import follow_routes, pack_routes
from orca_nav.testing.route_reference import carrot, progress_along
import pytest


def random_route(rng):
    """Return a random polyline of 2 to 6 points in a 10 m square."""
    return np.cumsum(rng.uniform(-3.0, 3.0, (rng.integers(2, 7), 2)), axis=0)


@pytest.mark.parametrize('seed', range(5))
def test_carrots_and_progress_match_the_reference_without_a_map(seed):
    """Without a map, carrot and remaining length equal the reference carrot / progress_along."""
    rng = np.random.default_rng(seed)
    routes = [random_route(rng) for _ in range(30)]
    positions = np.array([r[rng.integers(len(r))] + rng.normal(0, 0.5, 2) for r in routes])
    points, offsets = pack_routes(routes)
    got, segment, remaining, _ = follow_routes(points, offsets, np.zeros(30, np.int64),
                                               positions, 1.3)
    for i, r in enumerate(routes):
        want, seg = carrot(r, positions[i], 1.3)
        arc, _ = progress_along(r, positions[i])
        length = np.hypot(*np.diff(r, axis=0).T).sum()
        np.testing.assert_allclose(got[i], want, atol=1e-9)
        assert segment[i] == seg
        assert remaining[i] == pytest.approx(length - arc, abs=1e-9)


def test_a_wall_pulls_the_carrot_back_into_sight():
    """Round a corner whose inside is occupied, the carrot comes back until visible."""
    occupied = np.zeros((40, 40), bool)
    occupied[:28, 15:] = True                    # x > 1.5 m, y < 2.8 m: inside the corner
    route = np.array([[1.0, 0.5], [1.0, 3.0], [3.5, 3.0]])   # up, then right, past the block
    points, offsets = pack_routes([route])
    position = np.array([[1.0, 1.0]])
    blind, _, _, _ = follow_routes(points, offsets, np.zeros(1, np.int64), position, 3.5)
    seen, _, _, lost = follow_routes(points, offsets, np.zeros(1, np.int64), position, 3.5,
                                     occupied, (0.0, 0.0, 0.0), 0.1)
    assert blind[0, 0] == pytest.approx(2.5)      # 3.5 m along: past the corner, hidden
    assert seen[0, 0] < blind[0, 0]               # pulled back toward the corner
    assert not lost[0]
    # The pulled-back carrot is visible: no occupied cell on the line robot -> carrot.
    for t in np.linspace(0, 1, 200):
        x, y = position[0] + t * (seen[0] - position[0])
        assert not occupied[int(y / 0.1), int(x / 0.1)]


def test_progress_does_not_jump_back_along_a_route_that_loops():
    """A robot on the second pass of a U-turn keeps its later segment."""
    route = np.array([[0.0, 0.0], [5.0, 0.0], [5.0, 0.4], [0.0, 0.4]])
    points, offsets = pack_routes([route])
    _, segment, remaining, _ = follow_routes(points, offsets, np.array([2]),
                                             np.array([[2.0, 0.3]]), 0.5)
    assert segment[0] == 2 and remaining[0] == pytest.approx(2.0)


def test_a_robot_pushed_behind_a_wall_is_lost():
    """A robot on the far side of a wall from its whole route is reported lost."""
    occupied = np.zeros((40, 40), bool)
    occupied[19:21, :] = True                     # a wall along y = 2 m
    points, offsets = pack_routes([np.array([[0.5, 1.0], [3.5, 1.0]])])
    _, _, _, lost = follow_routes(points, offsets, np.zeros(1, np.int64),
                                  np.array([[2.0, 3.0]]), 1.0, occupied, (0.0, 0.0, 0.0), 0.1)
    assert lost[0]


def _jamb():
    """Return a 5 m square map at 0.05 m with a wall x 2.4..2.6 m, y 0..2 m (a door above)."""
    occupied = np.zeros((100, 100), bool)
    occupied[:40, 48:52] = True
    return occupied


def test_a_carrot_past_a_corner_nearer_than_the_clearance_is_pulled_back():
    """
    The line robot -> carrot passes 0.22 m from the jamb's end: hidden for a 0.35 m clearance.

    (A robot whose disc is wider than that gap would meet the corner head-on: ORCA lets it
    only slide sideways, and it stops there.)
    """
    heading = np.array([math.cos(math.radians(40.0)), math.sin(math.radians(40.0))])
    start = np.array([2.0, 1.95])
    route = np.array([start, start + 1.2 * heading, start + 1.2 * heading + [1.0, 0.0]])
    points, offsets = pack_routes([route])
    args = (points, offsets, np.zeros(1, np.int64), route[:1], 1.0, _jamb(), (0.0, 0.0, 0.0),
            0.05)
    thin, _, _, _ = follow_routes(*args, 0.0)
    wide, _, _, lost = follow_routes(*args, 0.35)
    assert thin[0] == pytest.approx(start + heading) and not lost[0]
    assert np.hypot(*(wide[0] - start)) < 0.5
    # The pulled-back carrot keeps the clearance (less one cell and a half) from the jamb.
    line = start + np.linspace(0.0, 1.0, 50)[:, None] * (wide[0] - start)
    nearest = np.clip(line, [2.4, 0.0], [2.6, 2.0])
    assert np.hypot(*(line - nearest).T).min() >= 0.35 - 0.075


def test_a_robot_pushed_against_a_wall_still_sees_along_it():
    """0.15 m from the wall (clearance 0.35): a carrot away from the wall is in sight."""
    route = np.array([[1.0, 2.9], [2.0, 2.9], [3.5, 2.9]])
    occupied = np.zeros((100, 100), bool)
    occupied[50:54, :] = True                     # a wall y 2.5..2.7 m along the route
    points, offsets = pack_routes([route])
    carrot, _, _, _ = follow_routes(points, offsets, np.zeros(1, np.int64),
                                    np.array([[1.5, 2.85]]), 1.0, occupied, (0.0, 0.0, 0.0),
                                    0.05, 0.35)
    assert carrot[0] == pytest.approx([2.5, 2.9], abs=1e-9)


def test_a_robot_that_cannot_drive_straight_back_to_its_route_is_lost():
    """
    Beside a door jamb with its route on the far side: its route is planned again.

    The robot stands over the end of the jamb (a wall y 0.9..1.1 m, x < 2 m; the door east of
    it); its route starts in the doorway below. The straight line back to it passes 0.09 m from
    the jamb, where the robot's disc would meet the corner head-on: lost, though a thin line
    would pass.
    """
    occupied = np.zeros((100, 100), bool)
    occupied[18:22, :40] = True
    points, offsets = pack_routes([np.array([[2.15, 0.63], [2.15, 0.3], [0.5, 0.3]])])
    args = (points, offsets, np.zeros(1, np.int64), np.array([[2.05, 1.43]]), 1.0, occupied,
            (0.0, 0.0, 0.0), 0.05)
    assert not follow_routes(*args, 0.0)[3][0]
    assert follow_routes(*args, 0.35)[3][0]
