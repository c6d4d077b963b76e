"""Build step of the gputap package.

The package carries two native files built from this repository's C sources
with the repository's own Makefile: libgputap.so (loaded with ctypes) and the
gputap command.  They are declared as one extension module so that every
packaging path treats them as native code: `pip install ./python`, `pip
install -e ./python` (built in place), and `pip wheel ./python` (a
platform wheel).

A third, optional one is an ordinary CPython extension, gputap._speedups
(gputap/_speedups.c: the range object in C, about five times cheaper than
through ctypes).  It needs the Python headers; when it cannot be built the
install goes on with a warning and the package uses its pure-ctypes path.

Settings (environment):
  GPUTAP_SRC       the repository root (default: the folder above this file)
  GPUTAP_PREBUILT  a folder holding an already built gputap and libgputap.so
                   to package instead of building (e.g. `make gpu-bundle`'s
                   .carry/build on a machine without the CLI's headers)
  GPUTAP_MAKE      make program (default: make); MAKEFLAGS is honoured
  GPUTAP_STATIC_DEPS  1 (the default when the static archives libyajl_s.a, libsqlite3.a and
                   libz.a are installed, as libyajl-dev, libsqlite3-dev and zlib1g-dev do): the
                   gputap command is linked with yajl, SQLite and zlib inside (the Makefile's
                   STATIC_DEPS=1, as `make gpu-bundle`), so a wheel runs on a machine without
                   those packages; 0: linked against the system's shared libraries.
                   libgputap.so needs only the C library and libz.so.1 either way.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = ("gputap", "libgputap.so")


class BuildNative(build_ext):
    """Runs the repository's Makefile and copies its two outputs into gputap/_bin."""

    def get_ext_filename(self, fullname):
        # gputap/_bin/libgputap.so, not libgputap.cpython-3xx-....so: the gputap
        # command finds the library next to itself by this name.
        if fullname == "gputap._bin.libgputap":
            return os.path.join("gputap", "_bin", "libgputap.so")
        return super().get_ext_filename(fullname)

    def build_extension(self, ext):
        if ext.name != "gputap._bin.libgputap":
            return super().build_extension(ext)
        dest_lib = os.path.abspath(self.get_ext_fullpath(ext.name))
        dest_dir = os.path.dirname(dest_lib)
        os.makedirs(dest_dir, exist_ok=True)
        prebuilt = os.environ.get("GPUTAP_PREBUILT")
        if prebuilt:
            src_dir = os.path.abspath(prebuilt)
        else:
            src_dir = self._make()
        for name in NATIVE:
            src = os.path.join(src_dir, name)
            if not os.path.isfile(src):
                sys.exit("gputap: %s was not built (looked in %s)" % (name, src_dir))
            dst = os.path.join(dest_dir, name)
            if os.path.abspath(src) != dst:
                shutil.copy2(src, dst)
            os.chmod(dst, 0o755)

    def copy_extensions_to_source(self):
        # in-place and editable builds: the gputap command goes next to the library
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        src = os.path.join(self.build_lib, "gputap", "_bin", "gputap")
        dst = os.path.join(build_py.get_package_dir("gputap._bin"), "gputap")
        if os.path.isfile(src):
            self.copy_file(src, dst, level=self.verbose)
            os.chmod(dst, 0o755)

    def _make(self):
        root = os.path.abspath(os.environ.get("GPUTAP_SRC") or os.path.join(HERE, ".."))
        if not os.path.isfile(os.path.join(root, "Makefile")) or not os.path.isdir(
            os.path.join(root, "src", "tap")
        ):
            sys.exit(
                "gputap: the C sources were not found in %s: install from the repository "
                "(pip install ./python from its root) or set GPUTAP_SRC to the repository root" % root
            )
        static = self._static_deps()
        # one build folder per source tree and linking (not per build command): the wheel, an
        # install and an editable install of the same tree share make's objects
        out = os.path.join(HERE, "build", "gputap-native" + ("-static" if static else ""))
        os.makedirs(out, exist_ok=True)
        make = os.environ.get("GPUTAP_MAKE", "make")
        jobs = "-j%d" % max(1, min(8, os.cpu_count() or 1))
        cmd = [make, "-C", root, jobs, "O=" + out] + (["STATIC_DEPS=1"] if static else []) + [
            out + "/gputap", out + "/libgputap.so"]
        print("gputap: " + " ".join(cmd), flush=True)
        try:
            subprocess.check_call(cmd)
        except (OSError, subprocess.CalledProcessError) as e:
            sys.exit(
                "gputap: building the native parts failed (%s); run tools/setup-deps.sh in the "
                "repository for the build dependencies (a C compiler, make, the CUDA toolkit "
                "headers, libyajl-dev, libsqlite3-dev, zlib1g-dev)" % e
            )
        return out

    @staticmethod
    def _static_deps():
        """GPUTAP_STATIC_DEPS, else whether the compiler finds the three static archives."""
        v = os.environ.get("GPUTAP_STATIC_DEPS")
        if v is not None:
            return v not in ("", "0")
        cc = os.environ.get("CC", "cc")
        for a in ("libyajl_s.a", "libsqlite3.a", "libz.a"):
            try:
                p = subprocess.run([cc, "-print-file-name=" + a], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, timeout=60).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                return False
            if not os.path.isabs(p) or not os.path.isfile(p):  # not found: the name comes back as is
                print("gputap: %s not found: the gputap command is linked against the system's "
                      "shared libraries (GPUTAP_STATIC_DEPS)" % a, flush=True)
                return False
        return True


setup(
    ext_modules=[
        Extension("gputap._bin.libgputap", sources=[]),
        Extension("gputap._speedups", sources=["gputap/_speedups.c"], optional=True),
    ],
    cmdclass={"build_ext": BuildNative},
)
