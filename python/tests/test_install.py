"""pip install ./python from a clean copy of the repository, into fresh virtual
environments: the package, its own libgputap.so and the `gputap` command; an
editable install; a wheel.  Offline: the environments see the system's
setuptools and wheel (tools/setup-deps.sh installs them) and build without
isolation."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, child_env


def sh(cmd, cwd=None, env=None, timeout=900):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    assert p.returncode == 0, "%s failed:\n%s" % (" ".join(cmd), p.stdout[-4000:])
    return p.stdout


def _ignore_built(d, names):
    """What a release tarball does not hold: build folders, git, egg-info, the native files built
    into gputap/_bin/ (the package itself, its __init__.py, is kept: setup.py places them in it)."""
    skip = set(shutil.ignore_patterns("build", "build-*", ".git", ".carry", "*.egg-info", "__pycache__",
                                      "_speedups*.so")(d, names))
    if os.path.basename(d) == "_bin":
        skip.update(n for n in names if n in ("gputap", "libgputap.so"))
    return skip


def clean_copy(dst, root=ROOT):
    """The repository's tracked and unignored files (what a clean clone has, with local edits); in a
    source tree without .git (a release tarball), the tree less what a build made."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = None
    if not files:
        shutil.copytree(root, dst, ignore=_ignore_built)
        return
    for f in files:
        src = os.path.join(root, f)
        if not os.path.isfile(src):
            continue
        d = os.path.join(dst, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(src, d)


def test_clean_copy_without_git_keeps_bin_package(tmp_path):
    # a source tree without .git: the copy keeps gputap/_bin/ (the editable install places
    # libgputap.so in it) and leaves out only what a build made
    tree = tmp_path / "tarball"
    for f in ("python/gputap/__init__.py", "python/gputap/_bin/__init__.py", "python/gputap/_bin/gputap",
              "python/gputap/_bin/libgputap.so", "src/tap/a.c", "build/gputap", "build-x/gputap",
              "python/gputap.egg-info/PKG-INFO"):
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        (tree / f).write_text("x")
    dst = tmp_path / "copy"
    clean_copy(str(dst), root=str(tree))
    assert (dst / "python/gputap/_bin/__init__.py").is_file()
    assert (dst / "python/gputap/__init__.py").is_file() and (dst / "src/tap/a.c").is_file()
    for gone in ("python/gputap/_bin/gputap", "python/gputap/_bin/libgputap.so", "build", "build-x",
                 "python/gputap.egg-info"):
        assert not (dst / gone).exists(), gone


def env_clean():
    env = child_env()
    for k in ("PYTHONPATH", "GPUTAP_LIB", "GPUTAP", "LIBGPUTAP", "PIP_REQUIRE_VIRTUALENV"):
        env.pop(k, None)
    env["MAKEFLAGS"] = ""
    return env


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("clone") / "gputap")
    clean_copy(d)
    assert not os.path.exists(os.path.join(d, "build"))
    return d


def venv(path):
    sh([sys.executable, "-m", "venv", "--system-site-packages", path])
    return os.path.join(path, "bin")


def test_pip_install_from_clean_copy(repo, tmp_path):
    bindir = venv(str(tmp_path / "venv"))
    env = env_clean()
    sh([os.path.join(bindir, "pip"), "install", "-q", "--no-build-isolation", "./python"], cwd=repo, env=env)
    elsewhere = str(tmp_path)
    out = sh([os.path.join(bindir, "gputap"), "--version"], cwd=elsewhere, env=env)
    assert out.startswith("gputap 0.1.0"), out
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    out = sh(["gputap", "help", "run"], cwd=elsewhere, env=env)  # on PATH
    assert "gputap run" in out
    code = (
        "import gputap, gmp_python, gmp_py_wrapper, os; i = gputap.library(); "
        "print(i['how'], i['path'].startswith(os.path.realpath(%r)), gputap.__version__, i['binding'])"
        % str(tmp_path / "venv")
    )
    out = sh([os.path.join(bindir, "python"), "-c", code], cwd=elsewhere, env=env)
    # the C extension is built with the package (the build machine has the Python headers)
    assert out.split() == ["package", "True", "0.1.0", "extension"], out
    # under `gputap run`, the package talks to the library the run loaded (no second copy)
    code = (
        "import gputap, json\n"
        "with gputap.range('under-run'):\n    pass\n"
        "i = gputap.library(); d = json.loads(gputap.results_json())\n"
        "print(i['how'], d['mode'], [r['path'] for r in d['ranges']])\n"
        "print(sum('libgputap.so' in l and 'r-xp' in l for l in open('/proc/self/maps')))\n"
    )
    out = sh(["gputap", "run", "-o", str(tmp_path / "run"), "--", os.path.join(bindir, "python"), "-c", code],
             cwd=elsewhere, env=env)
    lines = [ln for ln in out.splitlines() if not ln.startswith("gputap")]
    assert lines[0] == "loaded preload ['under-run']", out
    assert lines[1] == "1", out
    assert any(p.startswith("pid") for p in os.listdir(str(tmp_path / "run")))


def test_wheel_and_editable(repo, tmp_path):
    env = env_clean()
    dist = str(tmp_path / "dist")
    sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", dist, "./python"],
       cwd=repo, env=env)
    wheels = [f for f in os.listdir(dist) if f.endswith(".whl")]
    assert len(wheels) == 1 and "linux" in wheels[0], wheels
    names = zipfile.ZipFile(os.path.join(dist, wheels[0])).namelist()
    for n in ("gputap/_bin/libgputap.so", "gputap/_bin/gputap", "gmp_python.py", "gmp_py_wrapper.py",
              "gputap/__init__.py"):
        assert n in names, n
    assert any(n.startswith("gputap/_speedups.") and n.endswith(".so") for n in names), names
    assert any(n.endswith("entry_points.txt") for n in names)
    # the wheel runs where yajl and SQLite are not installed: both linked into the command
    # (setup.py's GPUTAP_STATIC_DEPS: the archives are there, tools/setup-deps.sh installs them)
    z = zipfile.ZipFile(os.path.join(dist, wheels[0]))
    z.extract("gputap/_bin/gputap", str(tmp_path / "whl"))
    z.extract("gputap/_bin/libgputap.so", str(tmp_path / "whl"))
    for n in ("gputap", "libgputap.so"):
        needed = sh(["readelf", "-d", str(tmp_path / "whl" / "gputap" / "_bin" / n)], env=env)
        assert "NEEDED" in needed and not any(lib in needed for lib in ("libyajl", "libsqlite3")), needed
    bindir = venv(str(tmp_path / "venv-e"))
    sh([os.path.join(bindir, "pip"), "install", "-q", "--no-build-isolation", "-e", "./python"], cwd=repo, env=env)
    out = sh([os.path.join(bindir, "python"), "-c",
              "import gputap; i = gputap.library(); print(i['path']); print(i['binding'])"],
             cwd=str(tmp_path), env=env)
    assert out.split() == [os.path.realpath(os.path.join(repo, "python", "gputap", "_bin", "libgputap.so")),
                           "extension"], out
    out = sh([os.path.join(bindir, "gputap"), "--version"], cwd=str(tmp_path), env=env)
    assert out.startswith("gputap 0.1.0")


def test_install_without_a_compiler_uses_ctypes(tmp_path):
    """The C extension is optional: with no working compiler the install succeeds and
    ranges go through ctypes (the native files come prebuilt here, as on a machine
    without the CLI's build dependencies)."""
    from conftest import lib_path

    prebuilt = os.path.dirname(lib_path())
    assert os.path.isfile(os.path.join(prebuilt, "gputap")), prebuilt
    repo = str(tmp_path / "gputap")  # a copy of its own: no extension built by another test
    clean_copy(repo)
    bindir = venv(str(tmp_path / "venv-nocc"))
    env = env_clean()
    env.update(GPUTAP_PREBUILT=prebuilt, CC="false", LDSHARED="false")
    out = sh([os.path.join(bindir, "pip"), "install", "-v", "--no-build-isolation", "./python"], cwd=repo, env=env)
    assert "gputap._speedups" in out and "failed" in out, out[-3000:]
    code = (
        "import gputap, glob, os\n"
        "with gputap.range('x'):\n    pass\n"
        "print(gputap.library()['binding'], gputap.push('p'), gputap.pop(),\n"
        "      glob.glob(os.path.join(os.path.dirname(gputap.__file__), '_speedups*')))\n"
    )
    out = sh([os.path.join(bindir, "python"), "-c", code], cwd=str(tmp_path), env=env_clean())
    assert out.split() == ["ctypes", "-1", "-1", "[]"], out
