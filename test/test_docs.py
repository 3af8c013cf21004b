"""
The documentation: README.md and docs/ stay short, linked, current and free of issue numbers.

docs/parameters.md is generated from the parameter table; when it is out of date, regenerate
it with ``python -m orca_nav.ros.params_doc > docs/parameters.md``.
"""

from pathlib import Path
import re

from orca_nav.ros import params_doc
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / 'README.md'
DOCS = ROOT / 'docs'
README_MAX_LINES = 200

# [text](target) and ![alt](target); the target ends at whitespace or ')' (an optional
# "title" after it is ignored).
LINK = re.compile(r'!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
# The word issue followed by a number, with or without '#': tracker numbers mean nothing to a
# reader of the code or the docs, so they say what was asked instead.
ISSUE_NUMBER = re.compile(r'\bissues?\s*#?\s*\d+', re.IGNORECASE)
# Where no issue number may appear, and which files there are text to check.
ISSUE_FREE = ('README.md', 'docs', 'orca_nav', 'config', 'launch')
TEXT_SUFFIXES = {'.md', '.py', '.yaml', '.yml', '.txt', '.cfg', '.xml'}
FENCE = re.compile(r'^(```|~~~)')


def markdown_files():
    """Return README.md and every docs/*.md."""
    return [README] + sorted(DOCS.glob('*.md'))


def without_code(text):
    """Return the text with fenced code blocks and code spans blanked out (links live outside)."""
    lines, in_fence = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            lines.append('')
            continue
        lines.append('' if in_fence else re.sub(r'`[^`]*`', '', line))
    return '\n'.join(lines)


def relative_links(path):
    """Return the relative link and image targets of a markdown file, anchors stripped."""
    targets = []
    for target in LINK.findall(without_code(path.read_text(encoding='utf-8'))):
        if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target) or target.startswith('#'):
            continue  # a URL (http:, mailto:) or an anchor in the same page
        target = target.split('#', 1)[0].split('?', 1)[0]
        if target:
            targets.append(target)
    return targets


def test_parameters_md_is_generated_from_the_table():
    """docs/parameters.md is exactly what params_doc renders from the parameter table now."""
    path = DOCS / 'parameters.md'
    expected = params_doc.markdown()
    actual = path.read_text(encoding='utf-8') if path.exists() else None
    assert actual == expected, (
        'docs/parameters.md is out of date with orca_nav/ros/params.py; regenerate it from the '
        'repository root with: python -m orca_nav.ros.params_doc > docs/parameters.md')


def test_parameters_md_lists_every_parameter():
    """Every fleet parameter and every per-robot override has a row."""
    text = params_doc.markdown()
    for spec in params_doc.params.FLEET_PARAMS:
        assert f'| `{spec.name}` |' in text, spec.name
    for spec in params_doc.params.ROBOT_PARAMS:
        assert f'| `<robot>.{spec.name}` |' in text, spec.name


def test_readme_is_short():
    """README.md is read in five minutes: at most README_MAX_LINES lines; the rest is in docs/."""
    lines = README.read_text(encoding='utf-8').splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f'README.md has {len(lines)} lines, at most {README_MAX_LINES}: move detail to docs/')


@pytest.mark.parametrize('path', markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    """Every relative link and image of README.md and docs/*.md points to an existing file."""
    broken = [target for target in relative_links(path)
              if not (path.parent / target).exists()]
    assert not broken, f'{path.relative_to(ROOT)}: links to missing files: {broken}'


def test_link_pattern():
    """The link pattern finds links and images, with titles and anchors, and skips code."""
    text = ('See [a](docs/a.md#x), ![img](docs/b.png "title") and [web](https://x.org/y). '
            '`[not](c.md)`\n```\n[nor](d.md)\n```\n[same page](#top)')
    found = [t.split('#')[0] for t in LINK.findall(without_code(text))
             if not t.startswith(('#', 'https:'))]
    assert found == ['docs/a.md', 'docs/b.png']


def issue_number_hits():
    """Return 'path:line: text' for every issue number in the files of ISSUE_FREE."""
    hits = []
    for name in ISSUE_FREE:
        root = ROOT / name
        files = [root] if root.is_file() else sorted(root.rglob('*'))
        for path in files:
            if (not path.is_file() or path.suffix not in TEXT_SUFFIXES
                    or '__pycache__' in path.parts):
                continue
            for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
                if ISSUE_NUMBER.search(line):
                    hits.append(f'{path.relative_to(ROOT)}:{number}: {line.strip()}')
    return hits


def test_no_issue_numbers():
    """No issue number in README.md, docs/, orca_nav/, config/ or launch/."""
    hits = issue_number_hits()
    assert not hits, 'issue numbers found (say what was asked instead):\n' + '\n'.join(hits)


def test_issue_number_pattern():
    """The pattern catches the usual spellings and leaves ordinary words alone."""
    # Built from parts, so that this file itself holds no issue number.
    for word, sep in (('issue', ' '), ('Issue', ' #'), ('ISSUE', '#'), ('issues', ' ')):
        assert ISSUE_NUMBER.search(f'as {word}{sep}12 asked'), word + sep
    for text in ('no issue here', 'tissue 3', 'issued 3 commands', 'an issue: 3 robots'):
        assert not ISSUE_NUMBER.search(text), text


def test_readme_starts_with_make_demo_and_make_test():
    """The README's first code block holds the two commands that work on a fresh machine."""
    blocks = re.findall(r'^```[^\n]*\n(.*?)^```', README.read_text(encoding='utf-8'),
                        re.MULTILINE | re.DOTALL)
    assert blocks, 'README.md has no fenced code block'
    assert 'make demo' in blocks[0] and 'make test' in blocks[0], blocks[0]
