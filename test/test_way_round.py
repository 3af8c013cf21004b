"""A way round standing people (core.routes.way_round), without ROS."""

import math

import numpy as np
from orca_nav.core.geometry import point_segment_distance
from orca_nav.core.routes.way_round import segments_distance, way_blocked, way_round

# Three people standing in a cup that opens toward a robot coming from the west, its goal
# straight through them: the straight way and ORCA's slide along the nearest one end inside
# the cup.
CUP = np.array([[2.0, 0.0], [1.6, 0.62], [1.6, -0.62]])
REACH = np.full(3, 0.3 + 0.3 + 0.1)


def _follow(start, target, centres, reach, step=0.05, limit=400):
    """Follow way_round (or the straight way where it is clear); return the path."""
    path = [np.asarray(start, float)]
    for _ in range(limit):
        p = path[-1]
        if math.dist(p, target) < step:
            break
        if way_blocked(p, target, centres, reach, 3.0):
            way = way_round(p, target, centres, reach, 1.0)
            assert way is not None, f'no way round from {p}'
        else:
            way = (target - p) / math.dist(p, target)
        path.append(p + step * way)
    return np.array(path)


def test_the_straight_way_into_a_cup_of_people_is_blocked_and_the_way_round_arrives():
    start, target = np.array([0.0, 0.0]), np.array([5.0, 0.0])
    assert way_blocked(start, target, CUP, REACH, 3.0)
    path = _follow(start, target, CUP, REACH)
    assert math.dist(path[-1], target) < 0.05, path[-1]
    gaps = np.hypot(*(path[:, None, :] - CUP[None]).transpose(2, 0, 1)) - REACH
    # The grid's cells are 0.1 m: the way keeps the grown discs to within one cell.
    assert gaps.min() > -0.1, gaps.min()
    # And it is a way round, not a wander: at most 1.6 times the straight distance.
    assert np.hypot(*np.diff(path, axis=0).T).sum() < 1.6 * 5.0


def test_starts_within_one_cell_get_the_same_way_past_a_gap_narrower_than_a_cell():
    """
    Two people whose grown discs leave a gap 0.055 m wide: the starts within one cell agree.

    A grid laid from the start opened and shut that gap as the start moved by millimetres
    (a differential robot's point ahead, as it turns), and the way flipped between the gap
    and round either person. The cells lie on the world's multiples of the resolution now.
    """
    people = np.array([[-0.83, 0.3], [0.83, 0.3]])
    reach = np.full(2, 0.8)
    target = np.array([0.0, 1.5])
    offsets = np.linspace(-0.045, 0.045, 7)
    for centre in ([0.0, -1.0], [0.3, -0.8], [-0.2, -1.2]):
        ways = np.array([way_round(np.array(centre) + (dx, dy), target, people, reach, 1.0)
                         for dx in offsets for dy in offsets])
        headings = np.degrees(np.arctan2(ways[:, 1], ways[:, 0]))
        assert np.ptp(headings) < 8.0, (centre, headings.round(1))


def test_a_clear_way_is_not_blocked_and_people_behind_the_target_do_not_count():
    start = np.array([0.0, 0.0])
    assert not way_blocked(start, np.array([0.0, 3.0]), CUP, REACH, 3.0)
    assert not way_blocked(start, np.array([1.0, 0.0]), CUP, REACH, 3.0)
    assert not way_blocked(start, np.array([5.0, 0.0]), CUP, REACH, 0.5)   # beyond the look
    assert not way_blocked(start, np.array([5.0, 0.0]), np.zeros((0, 2)), np.zeros(0), 3.0)


def test_a_robot_squeezed_against_a_person_still_gets_a_way_out():
    # The robot's centre 0.05 m inside a grown disc: that disc shrinks to leave it free.
    start = np.array([1.6 - 0.65, 0.62])
    way = way_round(start, np.array([5.0, 0.0]), CUP, REACH, 1.0)
    assert way is not None and abs(math.hypot(*way) - 1.0) < 1e-9
    # It does not head into the disc it touches.
    assert way @ (CUP[1] - start) <= 1e-9


def test_shut_in_by_people_the_way_leads_to_the_nearest_point_and_ends_there():
    ring = np.array([[math.cos(a), math.sin(a)] for a in np.linspace(0, 2 * math.pi, 13)[:-1]])
    reach = np.full(len(ring), 0.7)
    way = way_round(np.zeros(2), np.array([5.0, 0.0]), 1.5 * ring, reach, 1.0)
    assert way is not None and way[0] > 0.9
    assert way_round(np.array([0.75, 0.0]), np.array([5.0, 0.0]), 1.5 * ring, reach, 1.0) is None
    # A target on a person (its disc lethal): the way leads toward it all the same.
    way = way_round(np.zeros(2), CUP[0], CUP, REACH, 1.0)
    assert way is not None and way[0] > 0.0


# A 2 m wall at 75 degrees between a robot and its goal, as only the scans show it.
WALL = np.array([[[-0.26, -0.97], [0.26, 0.97]]])
NONE = np.zeros((0, 2))


def test_the_straight_way_into_a_wall_is_blocked_and_the_way_round_passes_its_end():
    start, target = np.array([1.0, 0.1]), np.array([-3.0, 0.0])
    wall_reach = 0.2 + 0.1
    assert way_blocked(start, target, NONE, np.zeros(0), 3.0, WALL, wall_reach)
    assert not way_blocked(start, target, NONE, np.zeros(0), 3.0)  # no people, no walls
    path = [start]
    for _ in range(400):
        p = path[-1]
        if math.dist(p, target) < 0.05:
            break
        if way_blocked(p, target, NONE, np.zeros(0), 3.0, WALL, wall_reach):
            way = way_round(p, target, NONE, np.zeros(0), 1.0, walls=WALL, wall_reach=wall_reach)
            assert way is not None, f'no way round from {p}'
        else:
            way = (target - p) / math.dist(p, target)
        path.append(p + 0.05 * way)
    path = np.array(path)
    assert math.dist(path[-1], target) < 0.05, path[-1]
    gaps = np.array([segments_distance(WALL, a, b)[0] for a, b in zip(path[:-1], path[1:])])
    assert gaps.min() > wall_reach - 0.1, gaps.min()  # within one cell of the grown wall
    assert np.hypot(*np.diff(path, axis=0).T).sum() < 1.3 * math.dist(start, target)


def test_segments_distance_matches_sampled_points():
    rng = np.random.default_rng(3)
    walls = rng.uniform(-2.0, 2.0, (200, 2, 2))
    a, b = np.array([-1.0, 0.5]), np.array([1.5, -0.3])
    got = segments_distance(walls, a, b)
    # Points every 1/800 along each of the two, each measured exactly to the other one.
    s = np.linspace(0.0, 1.0, 801)[:, None]
    line = a + s * (b - a)
    wall_points = walls[:, None, 0] + s[None] * (walls[:, None, 1] - walls[:, None, 0])
    brute = np.minimum(point_segment_distance(line, walls).min(axis=0),
                       point_segment_distance(wall_points.reshape(-1, 2), np.array([[a, b]]))
                       .reshape(len(walls), -1).min(axis=1))
    assert np.all(got <= brute + 1e-9)
    assert np.all(brute - got < 0.01)  # sampled at 1/800 of each
