"""The witness judges only what it executes (issue 36): a tape step's packet and effect come from its
overload, a launch's kernel must be the file's function with that code, and output provenance tells
what torch's plumbing made from what the kernels made. Real tapes of real interpreted calls."""

from __future__ import annotations

from pathlib import Path

from tests.worker.test_tape_replay import _run


def test_a_step_labelled_as_another_op_cannot_be_replayed(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.tape_replay import ReplayError
        x, y = torch.randn(64), torch.randn(64)
        def call():
            out = torch.empty_like(x)
            s = torch.add(x, y)
            K.copy[(2,)](s, out, 64, BLOCK=32)
            return out
        _, tape = record(call, {"x": x, "y": y})
        add = next(step for step in tape.steps if isinstance(step, OpStep) and step.op.startswith("aten::add"))
        RESULTS["recorded"] = [add.packet, add.effect]
        for packet, effect in (("aten.empty", True), ("aten.add", False), ("aten.view", False)):
            add.packet, add.effect = packet, effect
            try:
                replay(tape, {"x": x, "y": y})
                RESULTS[packet + str(effect)] = "replayed"
            except ReplayError as error:
                RESULTS[packet + str(effect)] = str(error)
        add.packet, add.effect = "aten.add", True
        replayer = TapeReplay(tape, torch.device("cpu"), {"x": x, "y": y})
        replayer.run(K, lambda: None)
        RESULTS["judged"] = dict(replayer.ops)
        """,
        tmp_path,
    )
    assert results["recorded"] == ["aten.add", True]
    for key in ("aten.emptyTrue", "aten.addFalse", "aten.viewFalse"):
        assert "is recorded as" in results[key] and "'aten.add' (effect True)" in results[key]
    # What the torch policy judges is the op that ran.
    assert results["judged"]["aten.add"] == 1


def test_a_launch_of_a_function_made_at_run_time_under_a_file_kernels_name_cannot_be_replayed(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.tape_replay import ReplayError
        import triton.language as tl
        x, y = torch.randn(64), torch.randn(64)
        def factory():
            def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 0.0, mask=offs < n)
            add.__qualname__ = "add"
            return add
        fake = triton.jit(factory())
        def call():
            out = torch.empty_like(x)
            fake[(2,)](x, y, out, 64, BLOCK=32)
            return out
        _, tape = record(call, {"x": x, "y": y})
        launch = next(step for step in tape.steps if isinstance(step, LaunchStep))
        RESULTS["named"] = launch.kernel
        try:
            replay(tape, {"x": x, "y": y})
            RESULTS["error"] = None
        except ReplayError as error:
            RESULTS["error"] = str(error)
        def honest():
            out = torch.empty_like(x)
            K.add[(2,)](x, y, out, 64, BLOCK=32)
            return out
        _, tape = record(honest, {"x": x, "y": y})
        RESULTS["honest"] = bool(torch.equal(replay(tape, {"x": x, "y": y})[0], x + y))
        """,
        tmp_path,
    )
    assert results["named"] == "add"
    assert results["error"] is not None and "whose code is not the file's" in results["error"]
    assert results["honest"]


def test_provenance_tells_plumbing_from_initialisation(tmp_path: Path) -> None:
    results = _run(
        """
        x, y = torch.randn(8, 8), torch.randn(8, 8)
        def provenance(call):
            _, tape = record(call, {"x": x, "y": y})
            replayer = TapeReplay(tape, torch.device("cpu"), {"x": x, "y": y})
            alone, masks = replayer.provenance()
            return alone[0], masks[0]
        def scratch_launch(out_like):
            scratch = torch.empty_like(out_like)
            K.copy[(1,)](x, scratch, 64, BLOCK=64)
        def clone_then_update():  # index_add's idiom: a whole input cloned, a kernel updates it in place
            out = x.clone()
            K.add[(1,)](out, y, out, 64, BLOCK=64)
            return out
        def zeros_then_kernel():
            out = torch.zeros(8, 8)
            K.add[(1,)](x, y, out, 64, BLOCK=64)
            return out
        def transpose_by_contiguous():  # the answer by a copy of a permuted view, a launch beside it
            out = x.t().contiguous()
            scratch_launch(out)
            return out
        def concat_by_slices():
            out = torch.empty(16, 8)
            out[:8].copy_(x)
            out[8:].copy_(y)
            scratch_launch(x)
            return out
        def cast():
            out = x.to(torch.float64)
            scratch_launch(x)
            return out
        def contiguous_of_own_output():  # a kernel's output, laid out as the reference returns it
            out = torch.empty(8, 8)
            K.add[(1,)](x, y, out, 64, BLOCK=64)
            return out.t().contiguous()
        for call in (clone_then_update, zeros_then_kernel, transpose_by_contiguous, concat_by_slices, cast, contiguous_of_own_output):
                name = call.__name__
                alone, mask = provenance(call)
                RESULTS[name] = [int(mask.sum()), mask.numel()]
                RESULTS[name + "_alone"] = alone.tolist()
        RESULTS["x_t"] = x.t().tolist()
        RESULTS["cat"] = torch.cat([x, y]).tolist()
        """,
        tmp_path,
    )
    for honest in ("clone_then_update", "zeros_then_kernel"):
        assert results[honest][0] == 0, honest
    for plumbing in ("transpose_by_contiguous", "concat_by_slices", "cast"):
        assert results[plumbing][0] == results[plumbing][1], plumbing
    assert results["transpose_by_contiguous_alone"] == results["x_t"]
    assert results["concat_by_slices_alone"] == results["cat"]
    # Plumbing moved the kernel's values (random bytes without the launch): marked, but never the answer.
    assert results["contiguous_of_own_output"][0] == 64
    assert results["contiguous_of_own_output_alone"] != results["x_t"]


def test_a_tape_that_claims_more_memory_than_the_call_had_cannot_be_replayed(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.tape_replay import ReplayError
        from gym.worker.tape import Value
        x, y = torch.randn(64), torch.randn(64)
        def call():
            out = torch.empty(64)
            K.add[(2,)](x, y, out, 64, BLOCK=32)
            return out
        _, tape = record(call, {"x": x, "y": y})
        RESULTS["honest"] = bool(torch.equal(TapeReplay(tape, torch.device("cpu"), {"x": x, "y": y}, memory_bytes=1 << 20).run(K, lambda: None)[0], x + y))
        empty = next(step for step in tape.steps if isinstance(step, OpStep) and step.packet == "aten.empty")
        # The allocation's size edited to 2^28 elements (1 GiB: reserved, never touched) or 2^34 (64 GiB: refused
        # by the allocator), its buffer left as recorded.
        for power in (28, 34):
            empty.args[0] = Value(kind="list", items=[Value(kind="int", integer=1 << power)])
            try:
                replay(tape, {"x": x, "y": y})
                RESULTS[f"inflated{power}"] = None
            except ReplayError as error:
                RESULTS[f"inflated{power}"] = str(error)
        # ... and with its buffer edited to match: more than the sandbox could hold.
        made = next(buffer for buffer in tape.buffers if buffer.origin == "step")
        made.nbytes = 4 << 34
        try:
            TapeReplay(tape, torch.device("cpu"), {"x": x, "y": y}, memory_bytes=8 << 30)
            RESULTS["claimed"] = None
        except ReplayError as error:
            RESULTS["claimed"] = str(error)
        """,
        tmp_path,
    )
    assert results["honest"]
    assert results["inflated28"] is not None and "where the call's made 256" in results["inflated28"]
    assert results["inflated34"] is not None and "cannot allocate what the tape asks" in results["inflated34"]
    assert results["claimed"] is not None and "more than the call's sandbox could hold" in results["claimed"]


def test_whether_atomics_ran_is_the_witnesss_observation_not_the_sources_text(tmp_path: Path) -> None:
    results = _run(
        """
        import types, triton.language as tl
        from gym.worker import replayer
        source = "\\n".join([
            "import triton",
            "import triton.language as tl",
            "@triton.jit",
            "def _bump(ptr):",
            "    tl.atomic_add(ptr, 1.0)",
            "@triton.jit",
            "def uses_helper(x_ptr, out_ptr):",
            "    _bump(out_ptr)",
            "@triton.jit",
            "def named_only(x_ptr, out_ptr):",
            "    atomic_free = tl.load(x_ptr)",
            "    tl.store(out_ptr, atomic_free)",
        ]) + "\\n"
        Path("atomics.py").write_text(source)
        module = load_kernels(Path("atomics.py"), "atomics_under_test", interpret=True)
        RESULTS["static"] = [replayer.uses_atomics(module.uses_helper, module), replayer.uses_atomics(module.named_only, module)]
        replayer.count_atomics()
        x, out = torch.ones(1), torch.zeros(1)
        before = replayer.ATOMICS_RAN[0]
        module.named_only[(1,)](x, out)
        after_plain = replayer.ATOMICS_RAN[0]
        module.uses_helper[(1,)](x, out)
        RESULTS["ran"] = [after_plain - before, replayer.ATOMICS_RAN[0] - after_plain]
        """,
        tmp_path,
    )
    # A local named like an atomic is no atomic; a helper's atomic is.
    assert results["static"] == [True, False]
    assert results["ran"][0] == 0 and results["ran"][1] >= 1
