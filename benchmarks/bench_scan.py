"""
Benchmark: laser scan to segments, and ray casting for the simulator.

Run from the repository root::

    python -m benchmarks.bench_scan [--repeats 20]

Scene: a 12 m x 9 m room with 12 boxes (52 wall and box faces) and 20 robots (radius 0.2 m).
Scans are ray cast from 50 robot poses with 1 cm range noise, then converted to segments with
the default parameters (every robot known, so their returns are dropped). Acceptance for the
scan: median under 1 ms for 720 beams.
"""

import argparse
import math
import time

import numpy as np
from orca_nav.core.perception.raycast import cast_rays, polygon_edges
from orca_nav.core.perception.scan import scan_to_segments

RANGE_MIN = 0.05  # [m]
RANGE_MAX = 8.0  # [m] a typical indoor 2-D lidar
NOISE_SIGMA = 0.01  # [m] range noise
ROBOT_RADIUS = 0.2  # [m]
ACCEPT_SCAN_MS = 1.0  # acceptance: median for one 720-beam scan to segments


def _inside_convex(p, poly):
    """Whether point p (2,) is inside the counter-clockwise convex polygon poly (K, 2)."""
    edge = np.roll(poly, -1, axis=0) - poly
    rel = p - poly
    return bool(np.all(edge[:, 0] * rel[:, 1] - edge[:, 1] * rel[:, 0] > 0.0))


def make_scene(rng, n_boxes=12, n_robots=20):
    """Room walls and boxes as (M, 2, 2) segments; robot centres (R, 2) in free space."""
    room = np.array([[-6.0, -4.5], [6.0, -4.5], [6.0, 4.5], [-6.0, 4.5]])
    polygons = [room]
    while len(polygons) < n_boxes + 1:
        cx, cy = rng.uniform([-5.0, -3.5], [5.0, 3.5])
        w, h = rng.uniform(0.3, 1.2, 2)
        yaw = rng.uniform(0.0, math.pi)
        c, s = math.cos(yaw), math.sin(yaw)
        corners = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2.0
        polygons.append(corners @ np.array([[c, s], [-s, c]]) + [cx, cy])
    segments = polygon_edges(polygons)
    robots = []
    while len(robots) < n_robots:
        p = rng.uniform([-5.5, -4.0], [5.5, 4.0])
        # Free space: not inside a box and clear of faces and other robots.
        e = segments[:, 1] - segments[:, 0]
        t = np.clip(np.einsum('ij,ij->i', p - segments[:, 0], e) / np.einsum('ij,ij->i', e, e),
                    0.0, 1.0)
        clear = np.min(np.linalg.norm(segments[:, 0] + t[:, None] * e - p, axis=1))
        inside = any(_inside_convex(p, poly) for poly in polygons[1:])
        far = all(np.linalg.norm(p - q) > 3 * ROBOT_RADIUS for q in robots)
        if clear > 2 * ROBOT_RADIUS and not inside and far:
            robots.append(p)
    return segments, np.array(robots)


def make_scans(rng, segments, robots, n_beams, n_scans):
    """Noisy scans from the first n_scans robots' poses: list of (ranges, angle_min, inc, pose)."""
    inc = 2.0 * math.pi / n_beams
    angle_min = -math.pi
    radii = np.full(len(robots), ROBOT_RADIUS)
    scans = []
    for k in range(n_scans):
        i = k % len(robots)
        pose = np.array([*robots[i], rng.uniform(-math.pi, math.pi)])
        others = np.arange(len(robots)) != i
        angles = pose[2] + angle_min + np.arange(n_beams) * inc
        ranges = cast_rays(pose[:2], angles, RANGE_MAX, segments, robots[others], radii[others])
        ranges = ranges + rng.normal(0.0, NOISE_SIGMA, n_beams)
        scans.append((ranges, angle_min, inc, pose))
    return scans


def timed(fn, args_list, repeats):
    """Per-call wall times [ms] of fn(*args) over every args in args_list, repeats times."""
    for args in args_list[:5]:
        fn(*args)  # warm-up
    times = []
    for _ in range(repeats):
        for args in args_list:
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
    return np.array(times) * 1e3


def bench_scan(rng, segments, robots, n_beams, repeats):
    """Median, p90 [ms] and mean segment count of scan_to_segments."""
    scans = make_scans(rng, segments, robots, n_beams, 50)
    radii = np.full(len(robots), ROBOT_RADIUS)

    def run(ranges, angle_min, inc, pose):
        return scan_to_segments(ranges, angle_min, inc, RANGE_MIN, RANGE_MAX, pose,
                                robot_positions=robots, robot_radii=radii)

    times = timed(run, scans, repeats)
    n_segs = np.mean([len(run(*s)) for s in scans])
    return np.median(times), np.percentile(times, 90), n_segs


def bench_raycast(rng, n_beams, n_segments, n_circles, repeats):
    """Median, p90 [ms] of cast_rays from 50 random origins."""
    segments = rng.uniform(-6.0, 6.0, (n_segments, 2, 2))
    centers = rng.uniform(-6.0, 6.0, (n_circles, 2))
    radii = np.full(n_circles, ROBOT_RADIUS)
    angles = np.linspace(-math.pi, math.pi, n_beams, endpoint=False)
    args = [(rng.uniform(-5.0, 5.0, 2), angles, RANGE_MAX, segments, centers, radii)
            for _ in range(50)]
    times = timed(cast_rays, args, repeats)
    return np.median(times), np.percentile(times, 90)


def main(argv=None):
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--repeats', type=int, default=20,
                        help='passes over the 50 scans / origins per row (default 20)')
    parser.add_argument('--seed', type=int, default=0, help='scene and noise seed')
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    segments, robots = make_scene(rng)
    bench_scan(rng, segments, robots, 720, 2)  # warm caches and CPU clocks before timing

    print('scan_to_segments: room with %d faces, %d robots (all known), noise %.0f cm'
          % (len(segments), len(robots), NOISE_SIGMA * 100))
    print('%-8s %12s %10s %10s' % ('beams', 'median [ms]', 'p90 [ms]', 'segments'))
    for n_beams in (360, 720, 1440):
        med, p90, n_segs = bench_scan(rng, segments, robots, n_beams, args.repeats)
        mark = ''
        if n_beams == 720:
            mark = '  (acceptance < %.1f ms: %s)' % (
                ACCEPT_SCAN_MS, 'pass' if med < ACCEPT_SCAN_MS else 'FAIL')
        print('%-8d %12.3f %10.3f %10.1f%s' % (n_beams, med, p90, n_segs, mark))

    print()
    print('cast_rays: random segments and circles, max_range %.0f m' % RANGE_MAX)
    print('%-8s %9s %8s %12s %10s' % ('beams', 'segments', 'circles', 'median [ms]',
                                      'p90 [ms]'))
    for n_beams, n_seg, n_circ in ((720, 50, 20), (720, 200, 50), (1440, 50, 20)):
        med, p90 = bench_raycast(rng, n_beams, n_seg, n_circ, args.repeats)
        print('%-8d %9d %8d %12.3f %10.3f' % (n_beams, n_seg, n_circ, med, p90))


if __name__ == '__main__':
    main()
