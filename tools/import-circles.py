#!/usr/bin/env python3
"""Finds import circles between the modules of one Rust crate.

Usage: python3 tools/import-circles.py shared/<crate>/src [more src dirs ...]

Prints each circle (the modules in it and the imports that close it) and exits 1 if any crate
has one, 0 otherwise.

A module imports another when its code names a path into it: a `use` (`pub use` included) or
a path written in the code (`crate::a::f()`, `super::X`, `self::child::Y`, or `child::f()` for
a child module). Paths are resolved to the module that defines the item: a name that
`lib.rs` or a `mod.rs` only re-exports (`pub use a::X`, `pub use a::*`) leads on to `a`.
Neither declaring a module (`mod a;`) nor re-exporting from it is an import of it, unless the
re-exporting module's own code uses the name. Test code is left out: items under `#[cfg(test)]` (a `mod tests`
block, a `#[cfg(test)] mod test_support;` file, a test-only `use`). Inline modules
(`pub mod keys { ... }`) count as part of the file that holds them.

Standard library only; reads the files as text (comments, strings and char literals are
blanked first), so a macro that builds paths out of tokens is not seen.
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


# --- lexing -------------------------------------------------------------------------------


def blank(text):
    """The text with comments, strings and char literals replaced by spaces (newlines kept,
    so offsets and line numbers stay as they were)."""
    out = list(text)
    n = len(text)
    i = 0

    def wipe(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif c in "rb" and re.match(r"(?:br|rb|r)#*\"", text[i : i + 260]) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            m = re.match(r"(?:br|rb|r)(#*)\"", text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            wipe(i, j)
            i = j
        elif c == '"' or (
            c == "b"
            and text.startswith('b"', i)
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}', '\'') or a lifetime ('a).
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'", text[i:])
            if m:
                wipe(i, i + m.end())
                i += m.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def matching_brace(text, open_at):
    """Index just past the `}` matching the `{` at `open_at`."""
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(text)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# --- test code ----------------------------------------------------------------------------

CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\((?P<body>[^\]]*)\)\s*\]")


def is_test_cfg(body):
    # `test`, `all(test, ...)`, `any(test, ...)`: code that exists only in test builds. A
    # `not(test)` is production code.
    words = re.findall(r"not\s*\(\s*test\s*\)|\btest\b", body)
    return any(w == "test" for w in words) and not any(w.startswith("not") for w in words)


def strip_test_items(text):
    """Blanks every item under a `#[cfg(test)]`-like attribute; answers the blanked text and
    the names of the file modules declared test-only (`#[cfg(test)] mod x;`)."""
    test_mods = set()
    out = text
    pos = 0
    while True:
        m = CFG_TEST.search(out, pos)
        if not m:
            break
        if not is_test_cfg(m.group("body")):
            pos = m.end()
            continue
        # Skip further attributes of the same item.
        j = m.end()
        while True:
            a = re.match(r"\s*#\s*\[", out[j:])
            if not a:
                break
            k = out.index("[", j + a.start())
            depth = 0
            for q in range(k, len(out)):
                if out[q] == "[":
                    depth += 1
                elif out[q] == "]":
                    depth -= 1
                    if depth == 0:
                        j = q + 1
                        break
        decl = re.match(r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", out[j:])
        if decl:
            test_mods.add(decl.group(1))
            end = j + decl.end()
        else:
            semi = out.find(";", j)
            brace = out.find("{", j)
            if brace >= 0 and (semi < 0 or brace < semi):
                end = matching_brace(out, brace)
            else:
                end = len(out) if semi < 0 else semi + 1
        out = out[: m.start()] + "".join(ch if ch == "\n" else " " for ch in out[m.start() : end]) + out[end:]
        pos = m.start()
    return out, test_mods


# --- the module tree ----------------------------------------------------------------------


class Module:
    def __init__(self, path, file, node):
        self.path = path  # tuple of names from the crate root
        self.file = file
        self.node = node  # the file module the edges are counted for (inline ones share it)
        self.children = {}  # name -> Module
        self.reexports = {}  # name -> absolute path (tuple) it re-exports
        self.globs = []  # absolute module paths re-exported whole (`pub use a::*`)
        self.uses = []  # (absolute path, line) this module names
        self.text = ""


def name_of(path):
    return "crate" if not path else "::".join(path)


USE = re.compile(r"\b(?P<pub>pub(?:\s*\([^)]*\))?\s+)?use\s+(?P<tree>[^;]+);")
MOD_DECL = re.compile(r"\b(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*(;|\{)")
CODE_PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self|" + IDENT + r")(?:\s*::\s*" + IDENT + r")+)")


def expand_use_tree(tree):
    """`a::{b::X, c::{Y, Z@W}, self}` (spaces gone, `as` written `@`) -> [(['a','b','X'], 'X'),
    ..., (['a','c','Z'], 'W'), (['a'], 'a')]: each leaf path and the name it binds (None for a
    glob)."""
    out = []

    def walk(prefix, s):
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        for p in parts:
            if not p:
                continue
            if "{" in p:
                head, rest = p.split("{", 1)
                walk(prefix + [h for h in head.split("::") if h], rest[: rest.rfind("}")])
                continue
            p, _, alias = p.partition("@")
            segs = prefix + [h for h in p.split("::") if h]
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            if segs and segs[-1] == "*":
                bound = None
            else:
                bound = alias or (segs[-1] if segs else None)
            out.append((segs, bound))

    walk([], tree)
    return out


def parse_use(tree_text):
    tree_text = re.sub(r"\s+as\s+(" + IDENT + r")", r"@\1", tree_text)
    tree_text = re.sub(r"\s+", "", tree_text)
    if tree_text.startswith("::"):
        # `use ::fluss::x`: another crate, whatever the local names.
        return []
    return expand_use_tree(tree_text)


class Crate:
    def __init__(self, src):
        self.src = src
        self.modules = {}  # path tuple -> Module
        root_file = None
        for cand in ("lib.rs", "main.rs"):
            if os.path.exists(os.path.join(src, cand)):
                root_file = os.path.join(src, cand)
                break
        if root_file is None:
            raise SystemExit(f"{src}: no lib.rs or main.rs")
        self.root = self.load_file((), root_file, os.path.dirname(root_file), True)

    def load_file(self, path, file, child_dir, owns_dir):
        with open(file, encoding="utf-8") as f:
            raw = f.read()
        text, test_mods = strip_test_items(blank(raw))
        module = Module(path, file, path)
        module.text = text
        self.modules[path] = module
        # Where its child files live: `a.rs` -> `a/`, `a/mod.rs` and `lib.rs` -> their folder.
        self.scan_scope(module, text, 0, len(text), path, file, child_dir, test_mods)
        return module

    def scan_scope(self, module, text, start, end, path, file, child_dir, test_mods):
        """Records the child modules, uses and code paths of text[start:end], which is the
        body of module `path` (a file module, or an inline one held by `module`'s file)."""
        here = self.modules[path]
        pos = start
        skipped = []
        while True:
            m = MOD_DECL.search(text, pos, end)
            if not m:
                break
            name = m.group(1)
            if m.group(2) == "{":
                brace = text.index("{", m.start())
                close = matching_brace(text, brace)
                inline = Module(path + (name,), file, module.node)
                inline.text = ""
                self.modules[path + (name,)] = inline
                here.children[name] = inline
                self.scan_scope(module, text, brace + 1, close - 1, path + (name,), file,
                                os.path.join(child_dir, name), set())
                skipped.append((m.start(), close))
                pos = close
            else:
                if name not in test_mods:
                    child_file = None
                    for cand in (os.path.join(child_dir, name + ".rs"),
                                 os.path.join(child_dir, name, "mod.rs")):
                        if os.path.exists(cand):
                            child_file = cand
                            break
                    if child_file is not None:
                        sub_dir = (os.path.dirname(child_file) if child_file.endswith("mod.rs")
                                   else os.path.join(child_dir, name))
                        here.children[name] = self.load_file(path + (name,), child_file, sub_dir, True)
                skipped.append((m.start(), m.end()))
                pos = m.end()
        # The scope's own text, without its inline modules' bodies.
        own = list(text[start:end])
        for a, b in skipped:
            for k in range(max(a, start), min(b, end)):
                if own[k - start] != "\n":
                    own[k - start] = " "
        own = "".join(own)
        here.own_text = (start, own)

    # -- collecting references ------------------------------------------------------------

    def absolute(self, path, segs):
        """The absolute path `segs` names when written in module `path`, or None when it
        leaves the crate (another crate, std)."""
        segs = list(segs)
        if not segs:
            return None
        base = list(path)
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] in ("self", "super"):
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    if not base:
                        return None
                    base.pop()
                segs.pop(0)
            return tuple(base + segs)
        here = self.modules.get(tuple(path))
        if here is not None and segs[0] in here.children:
            return tuple(base + segs)
        return None

    def collect(self):
        for path, module in list(self.modules.items()):
            if not hasattr(module, "own_text"):
                continue
            start, own = module.own_text
            file_text = self.modules[module.node].text
            # `use` items.
            spans, passed_on = [], []
            for m in USE.finditer(own):
                spans.append((m.start(), m.end()))
                line = line_of(file_text, start + m.start())
                for segs, bound in parse_use(m.group("tree")):
                    target = self.absolute(path, segs)
                    if target is None:
                        continue
                    if not m.group("pub"):
                        module.uses.append((target, line))
                    elif bound is None:
                        module.globs.append(tuple(t for t in target if t != "*"))
                    else:
                        module.reexports[bound] = target
                        passed_on.append((bound, target, line))
            code = list(own)
            for a, b in spans:
                for k in range(a, b):
                    if code[k] != "\n":
                        code[k] = " "
            code = "".join(code)
            # A `pub use` only passes a name on (its users are sent on to where it is
            # defined), unless this module's own code uses the name too.
            for bound, target, line in passed_on:
                if re.search(r"(?<![A-Za-z0-9_:])" + re.escape(bound) + r"\b", code):
                    module.uses.append((target, line))
            for m in CODE_PATH.finditer(code):
                segs = [s for s in re.split(r"\s*::\s*", m.group(1)) if s]
                target = self.absolute(path, segs)
                if target is None:
                    continue
                module.uses.append((target, line_of(file_text, start + m.start())))

    def resolve(self, target, seen=None):
        """The file module defining the item at absolute path `target`."""
        seen = seen or set()
        if target in seen:
            return None
        seen = seen | {target}
        here = self.modules[()]
        for i, seg in enumerate(target):
            if seg == "*":
                break
            if seg in here.children:
                here = here.children[seg]
                continue
            if seg in here.reexports:
                return self.resolve(here.reexports[seg] + tuple(target[i + 1 :]), seen)
            for glob in here.globs:
                via = self.resolve(glob + tuple(target[i:]), seen)
                if via is not None and via != here.node:
                    return via
            break
        return here.node

    def edges(self):
        """{(from, to): [(file, line), ...]} between file modules."""
        out = {}
        for module in self.modules.values():
            for target, line in module.uses:
                to = self.resolve(target)
                if to is None or to == module.node:
                    continue
                out.setdefault((module.node, to), []).append((module.file, line))
        return out


# --- cycles -------------------------------------------------------------------------------


def strongly_connected(nodes, succ):
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def shortest_cycle(start, members, succ):
    """A shortest cycle through `start` inside `members`, as a list of nodes."""
    from collections import deque

    prev = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(succ.get(v, ())):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start, start]


def check(src):
    crate = Crate(src)
    crate.collect()
    edges = crate.edges()
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    nodes = {m.node for m in crate.modules.values()}
    found = 0
    for comp in strongly_connected(nodes, succ):
        if len(comp) < 2:
            continue
        members = set(comp)
        cycle = shortest_cycle(min(comp), members, succ)
        found += 1
        print(f"{src}: circle of {len(comp)} modules: "
              + " -> ".join(name_of(p) for p in cycle))
        for a, b in zip(cycle, cycle[1:]):
            places = edges[(a, b)]
            shown = ", ".join(f"{os.path.relpath(f)}:{ln}" for f, ln in places[:3])
            more = f" (+{len(places) - 3} more)" if len(places) > 3 else ""
            print(f"    {name_of(a)} -> {name_of(b)}: {shown}{more}")
        if len(comp) > len(cycle) - 1:
            print("    (all in the circle: " + ", ".join(sorted(name_of(p) for p in comp)) + ")")
    if not found:
        print(f"{src}: no import circles ({len(nodes)} modules)")
    return found


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    total = 0
    for src in argv[1:]:
        total += check(src.rstrip("/"))
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
