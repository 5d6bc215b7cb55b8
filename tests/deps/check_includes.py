#!/usr/bin/python3
"""The dependency rules of include/README.md, checked against the build and the code.

1. Each library target's areas (DEPS of tfdebug_add_library, written by CMake to
   BUILD_DIR/tfdebug_areas.txt) are among those the rules table allows it.
2. Each public header include/tfdebug/AREA/*.hpp, and each source and private header under
   src/AREA/, includes tfdebug/OTHER/... only when AREA's target links OTHER (directly or
   through another area it links), or OTHER is AREA itself.
3. Every folder of public headers belongs to a target.

Usage: check_includes.py SOURCE_DIR BUILD_DIR. Prints each violation with file and line and exits
1 when there is one.
"""
import pathlib
import re
import sys

source = pathlib.Path(sys.argv[1])
build = pathlib.Path(sys.argv[2])


def read_rules():
    """{area: allowed areas} from the table under '## Dependency rules' in include/README.md."""
    text = (source / "include" / "README.md").read_text()
    section = text.split("## Dependency rules", 1)
    if len(section) != 2:
        sys.exit("include/README.md: no '## Dependency rules' section")
    rules = {}
    for line in section[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.fullmatch(r"`[a-z]+`", cells[0]):
            continue
        rules[cells[0].strip("`")] = set(re.findall(r"`([a-z]+)`", cells[1]))
    if not rules:
        sys.exit("include/README.md: the dependency rules table has no rows")
    return rules


def read_targets():
    """{area: direct DEPS} of every target CMake configured."""
    targets = {}
    for line in (build / "tfdebug_areas.txt").read_text().splitlines():
        area, _, deps = line.partition(":")
        targets[area.strip()] = set(deps.split())
    return targets


def closure(targets, area):
    seen, todo = set(), list(targets.get(area, ()))
    while todo:
        dep = todo.pop()
        if dep not in seen:
            seen.add(dep)
            todo.extend(targets.get(dep, ()))
    return seen


rules = read_rules()
targets = read_targets()
problems = []
for area, deps in sorted(targets.items()):
    if area not in rules:
        problems.append(f"CMake target tfdebug::{area} has no row in include/README.md's dependency rules")
        continue
    for dep in sorted(deps - rules[area]):
        problems.append(f"src/{area}/CMakeLists.txt: tfdebug::{area} links tfdebug::{dep}, "
                        f"which include/README.md does not allow (allowed: {', '.join(sorted(rules[area])) or 'nothing of ours'})")

include_re = re.compile(r'^\s*#\s*include\s*[<"]tfdebug/([a-z_]+)/', re.M)
for folder in sorted((source / "include" / "tfdebug").iterdir()):
    if folder.is_dir() and folder.name not in targets:
        problems.append(f"include/tfdebug/{folder.name}/: public headers of an area with no library target")


def check_files(area, files):
    linked = closure(targets, area) | {area}
    for path in files:
        text = path.read_text(errors="replace")
        for m in include_re.finditer(text):
            other = m.group(1)
            if other not in linked:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path.relative_to(source)}:{line}: includes tfdebug/{other}/, but tfdebug::{area} "
                                f"does not link tfdebug::{other} (it links: {', '.join(sorted(linked - {area})) or 'nothing of ours'})")


for area in sorted(targets):
    headers = sorted((source / "include" / "tfdebug" / area).glob("**/*.hpp"))
    sources = sorted(p for p in (source / "src" / area).glob("**/*") if p.suffix in (".cpp", ".hpp"))
    check_files(area, headers + sources)

for p in problems:
    print(p)
print(f"dependency rules: {len(targets)} targets, {len(problems)} problems")
sys.exit(1 if problems else 0)
