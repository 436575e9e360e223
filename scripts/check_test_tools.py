#!/usr/bin/env python3
"""Every program the test suite runs comes from a package this tree declares.

CI's first step. It lists the programs the suite executes, read from the tests' sources:
  - C++ tests: the first string of an argument vector (`Run({"setfacl", ...})`, `{"/bin/tar", ...}`)
    and the program of an exec call (`execl("/bin/sleep", ...)`);
  - shell scripts the suite runs (tests/**/*.sh, scripts/check_rooms.sh, the README's sh blocks,
    which tests/readme runs): the first word of every command;
  - add_test() commands in tests/**/CMakeLists.txt.
Each must be named in tests/tools.txt with the Debian package that provides it, or be one of the
tree's own programs. Each package there must be Essential, implied by Build-Depends
(build-essential), or declared twice: in scripts/dev.sh's package lists (so CI installs it) and in
debian/control's Build-Depends (so a package build with its tests has it). A package marked
`optional` may be left out of Build-Depends: its tests skip with a message naming the package.
Where a program is present on this machine, dpkg must say the named package provides it (the
mapping is checked, not trusted).

Usage: scripts/check_test_tools.py [--list]   (run from anywhere; exit 1 on any problem)
"""
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where the tests look programs up: Debian's own directories, not a developer's
# /usr/local or ~/.pyenv, which a fresh machine does not have.
SYSTEM_PATH = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
# Packages every Debian build has without declaring them (build-essential's closure).
BUILD_ESSENTIAL = {"build-essential", "binutils", "gcc", "g++", "make", "dpkg-dev", "libc-bin", "libc6-dev"}

SHELL_WORDS = set(
    "if then else elif fi for while until do done case esac in function select time ! { } [[ ]] "
    "[ test echo printf read cd pwd exit return set unset shift export local declare readonly "
    "trap wait eval exec source . true false : break continue let type command kill builtin "
    "compgen getopts hash jobs pushd popd umask ulimit mapfile readarray shopt alias disown".split())


def rel(path):
    return os.path.relpath(path, ROOT)


def own_programs():
    """Targets the tree builds (add_executable names) and scripts it holds: not packages'."""
    names = set()
    for cmake in glob.glob(os.path.join(ROOT, "**", "CMakeLists.txt"), recursive=True):
        if "/build" in rel(cmake).split("/")[0]:
            continue
        with open(cmake, encoding="utf-8") as f:
            names.update(re.findall(r"add_executable\(\s*([A-Za-z0-9_.+-]+)", f.read()))
    return names


def from_cpp(path, text):
    found = []
    for m in re.finditer(r'\b(?:Run|Tool)\(\s*\{\s*"([^"\s]+)"\s*[,}]', text):
        found.append((m.group(1), path, text.count("\n", 0, m.start()) + 1))
    for m in re.finditer(r'\bexecl?p?e?\(\s*"([^"]+)"', text):
        found.append((m.group(1), path, text.count("\n", 0, m.start()) + 1))
    return found


def code_only(text):
    """The script with quoted strings emptied (their text is data: awk programs, messages),
    here-documents' bodies blanked, continued lines joined, and each line kept at its number.
    Commands inside "$(...)" stay code."""
    lines = text.split("\n")
    delimiter = None
    for n, line in enumerate(lines):
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            lines[n] = ""
            continue
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?", line)
        if m and "<<<" not in line:
            delimiter = m.group(1)
    text = "\n".join(lines)
    out, stack, i, pending = [], [0], 0, 0  # stack: an int is code at that $( depth; a str a quote
    while i < len(text):
        ch, top = text[i], stack[-1]
        if ch == "\n" and pending and not isinstance(top, str):
            out.append("\n" * pending)  # the lines a continuation joined, given back
            pending = 0
        if isinstance(top, int):
            if ch == "\\" and i + 1 < len(text):
                if text[i + 1] == "\n":
                    out.append(" ")
                    pending += 1
                else:
                    out.append(text[i:i + 2])
                i += 2
                continue
            if ch == "#" and (i == 0 or text[i - 1] in " \t\n;("):
                while i < len(text) and text[i] != "\n":
                    i += 1
                continue
            if ch in "'\"":
                stack.append(ch)
                out.append('""')
            elif ch == "(" and len(stack) > 1:
                stack[-1] += 1
                out.append(ch)
            elif ch == ")" and len(stack) > 1:
                if top == 0:
                    stack.pop()
                    out.append(" ; ")
                else:
                    stack[-1] -= 1
                    out.append(ch)
            else:
                out.append(ch)
        elif top == "\"" and text.startswith("$(", i) and not text.startswith("$((", i):
            stack.append(0)
            out.append(" ; ")
            i += 2
            continue
        elif ch == "\\" and top == "\"":
            i += 2
            continue
        elif ch == top:
            stack.pop()
        elif ch == "\n":
            out.append("\n")
        i += 1
    return re.sub(r"\(\(.*?\)\)", " true ", "".join(out))


def shell_functions(text):
    return set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)", text, re.M))


def sourced_functions(path, text):
    """The functions of the scripts beside `path` that it sources (`source "$here/NAME.sh"`)."""
    names = set()
    for m in re.finditer(r"^\s*(?:source|\.)\s+\"?[^\s\"]*?([A-Za-z0-9_.-]+\.sh)\"?", text, re.M):
        sibling = os.path.join(os.path.dirname(path), m.group(1))
        if os.path.isfile(sibling):
            with open(sibling, encoding="utf-8") as f:
                names |= shell_functions(f.read())
    return names


def shell_commands(text, extra_functions=frozenset()):
    """(word, line) for the first word of each simple command: a tokenizer, not a parser, that
    knows the separators, assignments, redirections and the shell's own words. Calls of the
    script's functions, and of `extra_functions` (those of the scripts it sources), are not
    programs."""
    out = []
    functions = shell_functions(text) | set(extra_functions)
    for lineno, line in enumerate(code_only(text).splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        # Command substitutions start commands too.
        line = line.replace("$(", " ; ").replace("<(", " ; ").replace("`", " ; ")
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:  # an open quote continues on the next line: read what we have
            tokens = line.split()
        expect = True
        skip_next = False
        for tok in tokens:
            if skip_next:
                skip_next = False
                continue
            if tok and set(tok) <= set(";&|()"):
                expect = True
                continue
            if tok and set(tok) <= set("<>&0123456789"):
                skip_next = True  # a redirection's target
                continue
            if not expect:
                continue
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=", tok):
                continue  # NAME=value before a command
            if tok in ("!", "then", "do", "else", "elif", "if", "while", "until", "time", "{", "exec", "command", "nice",
                       "sudo", "env", "xargs", "timeout", "setpriv", "nohup", "ip netns exec"):
                if tok in ("nice", "sudo", "env", "xargs", "timeout", "setpriv", "nohup"):
                    out.append((tok, lineno))
                continue
            expect = False
            if tok in SHELL_WORDS or tok in functions or tok.startswith(("$", '"', "-")) or "=" in tok:
                continue
            if re.match(r"^(/usr)?/s?bin/[A-Za-z0-9_.+-]+$|^[a-z0-9][a-z0-9_.+-]*$", tok):
                out.append((tok, lineno))
    return out


def readme_blocks():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return "\n".join(re.findall(r"```sh\n(.*?)```", text, re.S))


def collect():
    found = []
    for path in glob.glob(os.path.join(ROOT, "tests", "**", "*"), recursive=True):
        if not os.path.isfile(path):
            continue
        name = os.path.basename(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if name.endswith((".cc", ".h", ".c")):
            found += from_cpp(rel(path), text)
        elif name.endswith(".sh"):
            found += [(w, rel(path), n) for w, n in shell_commands(text, sourced_functions(path, text))]
        elif name == "CMakeLists.txt":
            for m in re.finditer(r"add_test\(\s*NAME\s+\S+\s+COMMAND\s+(\S+)", text):
                found.append((m.group(1), rel(path), text.count("\n", 0, m.start()) + 1))
    for script in ("scripts/check_rooms.sh",):
        if os.path.exists(os.path.join(ROOT, script)):
            with open(os.path.join(ROOT, script), encoding="utf-8") as f:
                found += [(w, script, n) for w, n in shell_commands(f.read())]
    found += [(w, "README.md (sh blocks)", n) for w, n in shell_commands(readme_blocks())]
    return found


def read_manifest():
    tools = {}
    path = os.path.join(ROOT, "tests", "tools.txt")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) not in (2, 3) or (len(line) == 3 and line[2] != "optional"):
                sys.exit(f"tests/tools.txt:{n}: want 'PROGRAM PACKAGE [optional]', got {' '.join(line)!r}")
            tools[line[0]] = (line[1], len(line) == 3)
    return tools


def dev_sh_packages():
    with open(os.path.join(ROOT, "scripts", "dev.sh"), encoding="utf-8") as f:
        text = f.read()
    pkgs = set()
    for block in re.findall(r"^(?:build|test)_packages=\((.*?)^\)", text, re.S | re.M):
        for line in block.splitlines():
            pkgs.update(line.split("#", 1)[0].split())
    return pkgs


def build_depends():
    with open(os.path.join(ROOT, "debian", "control"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^Build-Depends:(.*?)^\S", text, re.S | re.M)
    names = set()
    for item in (m.group(1) if m else "").split(","):
        item = item.strip()
        if item:
            names.add(re.split(r"[\s(<\[]", item, 1)[0])
    return names


def essential(pkg):
    """Essential, or of priority required: on every Debian system, debootstrap's smallest included."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Essential} ${Priority}", pkg], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.split() in (["yes", "required"], ["no", "required"], ["yes"])


def depends(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Depends},${Pre-Depends}", pkg], capture_output=True, text=True)
    return {re.split(r"[\s(:]", d.strip(), 1)[0] for d in re.split(r"[,|]", r.stdout) if d.strip()}


def locate(program):
    if program.startswith("/"):
        return program if os.path.exists(program) else None
    for d in SYSTEM_PATH:
        p = os.path.join(d, program)
        if os.access(p, os.X_OK):
            return p
    return None


def owner(path):
    """The package dpkg says holds path (following /bin -> /usr/bin and symlinked alternatives)."""
    candidates = [path, os.path.realpath(path)]
    for c in list(candidates):  # merged /usr: dpkg knows a file by the name its package ships
        if c.startswith(("/bin/", "/sbin/")):
            candidates.append("/usr" + c)
        elif c.startswith(("/usr/bin/", "/usr/sbin/")):
            candidates.append(c[4:])
    for c in candidates:
        r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        names = set()
        for line in r.stdout.splitlines():
            if line.startswith("diversion by ") or ": " not in line:
                continue
            names |= {part.split(":")[0].strip() for part in line.split(": ", 1)[0].split(",")}
        if names:
            return names
    return set()


def main():
    listing = "--list" in sys.argv[1:]
    tools = read_manifest()
    ours = own_programs()
    problems = []
    seen = {}
    for word, where, line in collect():
        base = os.path.basename(word)
        if word.startswith(("./", "../")) or "${" in word or base in ours or word in SHELL_WORDS:
            continue
        if base not in tools and word not in tools:
            problems.append(f"{where}:{line}: runs '{word}', which tests/tools.txt does not map to a package")
            continue
        seen.setdefault(word if word in tools else base, f"{where}:{line}")
    declared_dev = dev_sh_packages()
    declared_deb = build_depends()
    for program, (pkg, optional) in sorted(tools.items()):
        implied = essential(pkg) or pkg in BUILD_ESSENTIAL
        if not implied and pkg not in declared_dev:
            problems.append(f"tests/tools.txt: {program}'s package {pkg} is not in scripts/dev.sh's package lists")
        if not implied and not optional and pkg not in declared_deb:
            problems.append(f"tests/tools.txt: {program}'s package {pkg} is not in debian/control's Build-Depends"
                            " (add it, '<!nocheck>' if only tests need it, or mark the tool optional"
                            " and make its tests skip naming the package)")
        path = locate(program)
        if path is None:
            if not optional:
                problems.append(f"{program} ({pkg}) is not installed here: run 'bash scripts/dev.sh deps'")
        else:
            owners = owner(path)
            if owners and pkg not in owners and not owners & depends(pkg):
                problems.append(f"tests/tools.txt says {program} comes from {pkg}; dpkg says {path} is "
                                f"{', '.join(sorted(owners))}'s")
        if listing:
            print(f"{program:24} {pkg:24} {'optional ' if optional else ''}{seen.get(program, '(listed, not found in the sources)')}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"check_test_tools: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_test_tools: {len(tools)} programs the suite runs, each from a declared package")
    return 0

if __name__ == "__main__":
    sys.exit(main())
