"""``python -m sciqag_dataset.llm.llama_launch [--no-extra-buffers] ARGS...``: llama-cpp-python's server
(``python -m llama_cpp.server ARGS...``), with ggml's extra weight buffers turned off on request.

Why a launcher of our own: on CPUs that report AMX, llama.cpp built there puts Q4 weights in ggml's AMX
buffer type and segfaults on the first decode (ggml-org/llama.cpp issue 20824). Loading the model with
``use_extra_bufts = False`` avoids it, and the server has no flag for that field, so it is set here, where
llama-cpp-python reads its model defaults, before the server loads the model.
"""

from __future__ import annotations

import sys

NO_EXTRA_BUFFERS = "--no-extra-buffers"


def without_extra_buffers() -> None:
    """Every model this process loads from now on keeps its weights in plain CPU buffers."""
    import llama_cpp.llama_cpp as native

    defaults = native.llama_model_default_params
    if getattr(defaults, "sciqag_plain_buffers", False):
        return

    def plain_buffers():
        params = defaults()
        params.use_extra_bufts = False
        return params

    plain_buffers.sciqag_plain_buffers = True
    # llama_cpp.Llama looks this function up on the module at each load, so replacing it here takes effect
    native.llama_model_default_params = plain_buffers


def main(argv: list[str]) -> None:
    if NO_EXTRA_BUFFERS in argv:
        argv = [a for a in argv if a != NO_EXTRA_BUFFERS]
        without_extra_buffers()
    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", *argv]
    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
