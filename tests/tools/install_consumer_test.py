"""The installed library as a project outside this repository uses it: `cmake --install` into
a fresh prefix, then examples/consumer built against it twice, with find_package(afm CONFIG)
(target afm::afm) and with pkg-config, each run from a folder with no models/ above it so that
default_model() must find the installed model beside the library. The installed files, the
version the library reports and the package's version are checked too. AFM_BUILD_DIR is set
by CTest.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("AFM_BUILD_DIR", "build")
SOURCE = os.path.abspath(os.environ.get("AFM_SOURCE_DIR", "."))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def project_version():
    text = open(os.path.join(SOURCE, "CMakeLists.txt")).read()
    return re.search(r"project\(afm VERSION ([0-9.]+)", text).group(1)


def check_answer(out, version, package):
    lines = out.splitlines()
    want = f"afm {version}" + (f" (package {version})" if package else "")
    assert lines[0] == want, (lines[0], want)
    fields = dict(line.split(": ", 1) for line in lines[1:])
    assert set(fields) == {"guest", "nights", "city"}, out
    assert fields["guest"] and fields["city"], out
    assert 1 <= int(fields["nights"]) <= 60, out  # the schema's range, enforced while decoding


def main():
    version = project_version()
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        run(["cmake", "--install", BUILD, "--prefix", prefix])
        for path in ("include/afm/afm.h", "include/afm/version.h", "lib/cmake/afm/afmConfig.cmake",
                     "lib/cmake/afm/afmTargets.cmake", "lib/pkgconfig/afm.pc", "bin/afm",
                     "share/afm/models/afm-device-21m.gguf"):
            assert os.path.exists(os.path.join(prefix, path)), path
        libs = [f for f in os.listdir(os.path.join(prefix, "lib")) if f.startswith("libafm.so")]
        assert sorted(libs) == ["libafm.so", "libafm.so.0.1", f"libafm.so.{version}"], libs
        env = {k: v for k, v in os.environ.items() if k != "AFM_MODEL"}
        work = os.path.join(tmp, "work")  # no models/ here or above
        os.makedirs(work)

        # find_package(afm CONFIG) -> afm::afm
        build = os.path.join(tmp, "consumer-build")
        run(["cmake", "-S", os.path.join(SOURCE, "examples/consumer"), "-B", build,
             f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
        run(["cmake", "--build", build], env=env)
        check_answer(run([os.path.join(build, "afm_consumer")], cwd=work, env=env), version, True)

        # pkg-config --cflags --libs afm
        pc_env = dict(env, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "afm"], env=pc_env).split()
        assert run(["pkg-config", "--modversion", "afm"], env=pc_env).strip() == version
        exe = os.path.join(tmp, "pc_consumer")
        run(["c++", os.path.join(SOURCE, "examples/consumer/main.cpp"), *flags, "-o", exe], env=pc_env)
        check_answer(run([exe], cwd=work, env=env), version, False)

        # The installed CLI runs and reads the installed model.
        out = run([os.path.join(prefix, "bin/afm"), "info",
                   os.path.join(prefix, "share/afm/models/afm-device-21m.gguf")], cwd=work, env=env)
        assert "afm-device" in out, out
        # `afm eval` finds its suites under share/afm and runs one with this Python (the
        # installed runner imports the installed generator, not the checkout's).
        py_env = dict(env, AFM_PYTHON=sys.executable)
        model = os.path.join(prefix, "share/afm/models/afm-device-21m.gguf")
        out = run([os.path.join(prefix, "bin/afm"), "eval", "-m", model, "--tasks",
                   "perplexity,arithmetic", "--n", "2", "--json", "-t", "2"], cwd=work, env=py_env)
        result = json.loads(out)
        assert result["tasks"]["perplexity"]["metrics"][0]["value"] > 1, result
        assert result["tasks"]["arithmetic"]["metrics"][0]["n"] == 2, result


if __name__ == "__main__":
    if shutil.which("pkg-config") is None:
        sys.exit("pkg-config is missing: scripts/setup installs it")
    main()
