"""Builds loopcast's Python package through CMake (see pyproject.toml).

The extension ``loopcast._core`` is the CMake target ``loopcast_python``; the command-line program
``loopcast_cli`` goes to ``loopcast/bin/loopcast``, which the ``loopcast`` command runs; the pure-Python modules
come from ``python/loopcast`` and the presets from ``models/`` (bundled as ``loopcast/models``, which
``loopcast.models_dir()`` uses when ``$LOOPCAST_MODELS`` is not set). ``LOOPCAST_CMAKE_BUILD_DIR``
reuses an existing CMake build tree instead of configuring a new one.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
(ROOT / "build-wheel").mkdir(exist_ok=True)


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build_dir = pathlib.Path(os.environ.get("LOOPCAST_CMAKE_BUILD_DIR") or (pathlib.Path(self.build_temp) / "cmake"))
        if not (build_dir / "CMakeCache.txt").exists():
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                                   "-DLOOPCAST_BUILD_PYTHON=ON", "-DLOOPCAST_BUILD_CLI=ON", "-DLOOPCAST_BUILD_TESTS=OFF",
                                   "-DLOOPCAST_BUILD_BENCHMARKS=OFF", "-DLOOPCAST_BUILD_EXAMPLES=OFF",
                                   f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "loopcast_python", "loopcast_cli", "-j",
                               str(os.cpu_count() or 2)])
        built = sorted((build_dir / "python" / "loopcast").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"no loopcast/_core*.so in {build_dir}/python after the CMake build")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)
        # The command-line program, which the `loopcast` command (loopcast._cli) runs.
        program = build_dir / "loopcast"
        if not program.is_file():
            raise RuntimeError(f"no {program} after the CMake build")
        (target.parent / "bin").mkdir(exist_ok=True)
        shutil.copy2(program, target.parent / "bin" / "loopcast")


class BuildPyWithModels(build_py):
    def run(self) -> None:
        super().run()
        dest = pathlib.Path(self.build_lib) / "loopcast" / "models"
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(ROOT / "models", dest)


setup(
    packages=["loopcast"],
    package_dir={"": "python"},
    package_data={"loopcast": ["py.typed", "*.pyi"]},
    ext_modules=[CMakeExtension("loopcast._core")],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithModels},
    zip_safe=False,
    # setuptools' own build folders, away from the CMake build trees (build/, build-asan/, …).
    options={"build": {"build_base": str(ROOT / "build-wheel")}, "egg_info": {"egg_base": str(ROOT / "build-wheel")}},
)
