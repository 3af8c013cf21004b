"""
map_server map files without ROS: read (``load_map_yaml``) and write (``save_map_yaml``).

An occupancy grid here is the tuple ``(data, width, height, resolution, origin)`` with the fields
of a ``nav_msgs/OccupancyGrid``: ``data`` an int8 array of ``width * height`` values, row-major
with row 0 at the smallest y, 100 = occupied, 0 = free, -1 = unknown; ``resolution`` [m / cell];
``origin`` the (x, y, yaw) of the lower-left corner of cell (0, 0). The format is ROS
map_server's / nav2_map_server's: a YAML file next to a PGM or PNG image. Scenarios read their
``map_file`` with it; ``orca_nav.sim.maps`` rasterizes scenarios into such grids.
"""

import math
from pathlib import Path

import numpy as np
import yaml

OCCUPIED, FREE, UNKNOWN = 100, 0, -1
MODES = ('trinary', 'scale', 'raw')
MAP_KEYS = ('image', 'resolution', 'origin', 'negate', 'occupied_thresh', 'free_thresh', 'mode')


class MapFileError(ValueError):
    """A map file that cannot be read, with the reason."""


def load_map_yaml(path):
    """
    Read a map_server map: a YAML file and its image (PGM or PNG, read with Pillow).

    YAML keys (as map_server): image (path relative to the YAML file), resolution [m / cell],
    origin [x, y, yaw] of the lower-left pixel, negate (0/1), occupied_thresh, free_thresh and
    optionally mode (trinary, the default; scale; raw). A pixel's occupancy is
    ``1 - brightness`` (``brightness`` with negate); above occupied_thresh it is 100, below
    free_thresh 0, else -1 in trinary mode or a value in 1..99 in scale mode (-1 for a
    transparent pixel); in raw mode the value is the brightness in 0..255 itself (-1 above 100).
    Row 0 of the image is the top of the map: rows are flipped into OccupancyGrid order.
    Returns (data int8 (H*W,), width, height, resolution, (x, y, yaw)); raises MapFileError.
    """
    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise MapFileError(f'{path}: cannot read the map YAML: {exc}') from None
    if not isinstance(spec, dict):
        raise MapFileError(f'{path}: expected a mapping with the keys {", ".join(MAP_KEYS)}')
    unknown = sorted(set(spec) - set(MAP_KEYS))
    if unknown:
        raise MapFileError(f'{path}: unknown keys {unknown}; valid keys: {", ".join(MAP_KEYS)}')
    for key in ('image', 'resolution', 'origin'):
        if key not in spec:
            raise MapFileError(f'{path}: missing {key!r}')
    try:
        resolution = float(spec['resolution'])
        origin = tuple(float(v) for v in spec['origin'])
        negate = bool(int(spec.get('negate', 0)))
        occupied_thresh = float(spec.get('occupied_thresh', 0.65))
        free_thresh = float(spec.get('free_thresh', 0.196))
    except (TypeError, ValueError) as exc:
        raise MapFileError(f'{path}: bad value: {exc}') from None
    mode = str(spec.get('mode', 'trinary')).lower()
    if mode not in MODES:
        raise MapFileError(f'{path}: mode must be one of {MODES}, got {spec["mode"]!r}')
    if not (math.isfinite(resolution) and resolution > 0.0):
        raise MapFileError(f'{path}: resolution must be positive, got {resolution}')
    if len(origin) != 3 or not all(math.isfinite(v) for v in origin):
        raise MapFileError(f'{path}: origin must be [x, y, yaw], got {spec["origin"]!r}')
    if not 0.0 <= free_thresh <= occupied_thresh <= 1.0:
        raise MapFileError(f'{path}: need 0 <= free_thresh <= occupied_thresh <= 1, got '
                           f'{free_thresh} and {occupied_thresh}')
    image = path.parent / str(spec['image'])
    shade, alpha = _read_image(image)
    height, width = shade.shape
    data = _occupancy_values(shade, alpha, negate, occupied_thresh, free_thresh, mode)
    # Image row 0 is the top of the map (largest y); OccupancyGrid row 0 is the bottom.
    data = data[::-1].astype(np.int8).ravel()
    return data, width, height, resolution, origin


def _read_image(path):
    """Return (brightness in 0..1, (H, W) float; opaque (H, W) bool) of an image file."""
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(path) as img:
            img.load()
            has_alpha = img.mode in ('LA', 'RGBA', 'PA') or 'transparency' in img.info
            if img.mode in ('I', 'I;16', 'I;16B', 'I;16L', 'F'):
                values = np.asarray(img, dtype=float)
                scale = 65535.0 if img.mode.startswith('I;16') else max(values.max(), 1.0)
                return values / scale, np.ones(values.shape, bool)
            rgba = np.asarray(img.convert('RGBA'), dtype=float) / 255.0
    except (OSError, UnidentifiedImageError) as exc:
        raise MapFileError(f'cannot read the map image {path}: {exc}') from None
    # map_server averages the colour channels.
    shade = rgba[:, :, :3].mean(axis=2)
    opaque = rgba[:, :, 3] >= 1.0 if has_alpha else np.ones(shade.shape, bool)
    return shade, opaque


def _occupancy_values(shade, opaque, negate, occupied_thresh, free_thresh, mode):
    """Per-pixel OccupancyGrid values (H, W) int16 in image row order, as map_server computes."""
    if mode == 'raw':
        value = np.round(shade * 255.0)
        return np.where(value <= OCCUPIED, value, UNKNOWN).astype(np.int16)
    occ = shade if negate else 1.0 - shade
    out = np.full(shade.shape, UNKNOWN, dtype=np.int16)
    if mode == 'scale':
        span = max(occupied_thresh - free_thresh, 1e-12)
        out[:] = np.rint((occ - free_thresh) / span * 100.0)
    out[occ > occupied_thresh] = OCCUPIED
    out[occ < free_thresh] = FREE
    if mode == 'scale':
        out[~opaque] = UNKNOWN
    return out


def unknown_outside(occupancy):
    """
    Return the grid with the free space connected to the map's border marked unknown (-1).

    What a mapping run of a closed building leaves: everything outside its outer walls unseen.
    """
    from scipy import ndimage
    data, width, height, resolution, origin = occupancy
    grid = np.asarray(data, dtype=np.int8).reshape(height, width).copy()
    labels, _ = ndimage.label(grid == FREE)
    border = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    grid[np.isin(labels, border[border > 0])] = UNKNOWN
    return grid.ravel(), width, height, resolution, origin


def save_map_yaml(path, occupancy, image_format='pgm', comment=''):
    """
    Write an occupancy grid as a map_server map: ``path`` (YAML) and an image next to it.

    Trinary, as map_saver writes it: occupied 0 (black), free 254, unknown 205 with
    occupied_thresh 0.65 and free_thresh 0.196; image_format 'pgm' or 'png'; ``comment`` lines
    go at the top of the YAML. Reading the file back with :func:`load_map_yaml` gives the same
    grid. Returns the image path.
    """
    from PIL import Image
    data, width, height, resolution, origin = occupancy
    grid = np.asarray(data).reshape(height, width)
    pixels = np.full(grid.shape, 205, dtype=np.uint8)
    pixels[grid == FREE] = 254
    pixels[grid >= 65] = 0
    path = Path(path)
    image = path.with_suffix('.' + image_format)
    Image.fromarray(pixels[::-1]).save(image)
    spec = {'image': image.name, 'mode': 'trinary', 'resolution': float(resolution),
            'origin': [float(v) for v in origin], 'negate': 0, 'occupied_thresh': 0.65,
            'free_thresh': 0.196}
    header = ''.join(f'# {line}\n'.rstrip(' ') for line in comment.splitlines())
    path.write_text(header + yaml.safe_dump(spec, default_flow_style=None, sort_keys=False))
    return image
