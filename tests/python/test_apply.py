"""apply.py with real torch on the CPU: plans written to a file and applied as under `gpuscope apply` (the
bootstrap's sitecustomize on PYTHONPATH, GPUSCOPE_TORCH=apply), to programs that know nothing of them."""

import json
import pathlib
import re
import sys
import tempfile
import unittest

import numpy
import torch

import support


class PlanCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def plan(self, *fixes):
        return support.write_plan(self.tmp, fixes)

    def json_output(self, program, *args, plan=None):
        """Runs the program and returns (what it printed as JSON, the lines the bridge wrote on stderr)."""
        result = support.run_ok(self, program, *args, plan=plan)
        return json.loads(result.stdout), support.bridge_lines(result.stderr)

    def training(self, model, plan=None):
        """gradients.py's results for MODEL: gradients, losses, blocks' forward calls over two steps."""
        out = f"{self.tmp}/{model}-{'plan' if plan else 'plain'}.pt"
        result = support.run_ok(self, "gradients.py", out, "--model", model, plan=plan)
        return torch.load(out), support.bridge_lines(result.stderr)


class Checkpoint(PlanCase):
    """Which blocks the checkpoint fix picks: a picked block's forward runs twice per step (once more when
    backward recomputes it), every other module's once."""

    def checkpointed(self, model):
        trained, lines = self.training(model, plan=self.plan({"kind": "checkpoint", "segments": 2}))
        return trained["calls"], lines

    def test_transformer_layers_are_checkpointed(self):
        calls, lines = self.checkpointed("transformer")
        self.assertEqual(calls, {f"layers.{i}": 4 for i in range(4)})  # two steps, recomputed in each
        self.assertIn("applied: 4 blocks of Transformer checkpointed", lines[-1])

    def test_resnet_bottlenecks_of_every_stage_are_checkpointed(self):
        calls, lines = self.checkpointed("resnet")
        stages = {"layer1": 2, "layer2": 2, "layer3": 3}
        self.assertEqual(calls, {f"{stage}.{i}": 4 for stage, n in stages.items() for i in range(n)})
        self.assertIn("applied: 7 blocks of ResNet checkpointed", lines[-1])

    def test_nested_runs_checkpoint_the_outermost(self):
        calls, lines = self.checkpointed("nested")
        self.assertEqual(calls, {f"stages.{s}{b}": 4 for s in range(2) for b in ("", ".0", ".1")})
        self.assertIn("applied: 2 blocks of NestedStages checkpointed", lines[-1])

    def test_model_with_its_own_switch_gets_gradient_checkpointing_enable(self):
        trained, lines = self.training("self_checkpointing", plan=self.plan({"kind": "checkpoint"}))
        self.assertEqual(trained["enabled_with"], {"gradient_checkpointing_kwargs": {"use_reentrant": False}})
        self.assertEqual(trained["calls"], {f"layers.{i}": 2 for i in range(4)})  # left to the model
        self.assertIn("SelfCheckpointing.gradient_checkpointing_enable() (non-reentrant)", lines[-1])

    def test_unchecked_training_runs_blocks_once(self):
        trained, _ = self.training("transformer")
        self.assertEqual(trained["calls"], {f"layers.{i}": 2 for i in range(4)})

    def test_checkpointed_training_gives_the_same_gradients(self):
        plain, _ = self.training("transformer")
        checkpointed, _ = self.training("transformer", plan=self.plan({"kind": "checkpoint"}))
        for name, grad in plain["grads"].items():
            self.assertTrue(torch.equal(grad, checkpointed["grads"][name]), name)
        self.assertTrue(torch.equal(torch.stack(plain["losses"]), torch.stack(checkpointed["losses"])))

    def test_recomputation_leaves_batchnorms_running_statistics_as_one_forward_does(self):
        # The recomputation runs each bottleneck's BatchNorms again in training mode: their running statistics
        # (and counts) are put back after it, so the model's state is the unmodified run's, bit for bit.
        plain, _ = self.training("resnet", plan=None)
        checkpointed, _ = self.training("resnet", plan=self.plan({"kind": "checkpoint"}))
        self.assertTrue(any("running_mean" in name for name in plain["buffers"]))
        for name, buffer in plain["buffers"].items():
            self.assertTrue(torch.equal(buffer, checkpointed["buffers"][name]), name)
        for name, grad in plain["grads"].items():
            self.assertTrue(torch.equal(grad, checkpointed["grads"][name]), name)


class FusedOptimizer(PlanCase):
    def test_adam_adamw_sgd_are_built_fused(self):
        built, lines = self.json_output("optimizers.py", plan=self.plan({"kind": "optimizer", "setting": "fused"}))
        for name in ("Adam", "AdamW", "SGD"):
            self.assertEqual(built[name], {"fused": True, "differentiable": False, "parameters": 4, "stepped": True})
        self.assertIn("applied: Adam, AdamW and SGD are built with fused=True", lines[0])

    def test_without_the_plan_they_are_not_fused(self):
        built, _ = self.json_output("optimizers.py")
        self.assertEqual({built[name]["fused"] for name in built}, {None})

    def test_optimizer_fused_cannot_serve_is_built_as_the_script_asked(self):
        plan = self.plan({"kind": "optimizer", "setting": "fused"})
        built, _ = self.json_output("optimizers.py", "--differentiable", plan=plan)
        for name in ("Adam", "AdamW", "SGD"):
            self.assertEqual(built[name], {"fused": None, "differentiable": True, "parameters": 4, "stepped": False})

    def test_other_optimizer_settings_are_not_applied(self):
        built, lines = self.json_output("optimizers.py", plan=self.plan({"kind": "optimizer", "setting": "zero"}))
        self.assertEqual(built["Adam"]["fused"], None)
        self.assertIn("not applied: optimizer setting 'zero' needs a code change", lines[0])


class DataLoaderWorkers(PlanCase):
    FIX = {"kind": "data_loader", "num_workers": 2, "pin_memory": False, "persistent_workers": True}

    def test_loader_gets_the_plans_workers_and_the_same_batches(self):
        plain, _ = self.json_output("data_loader.py")
        applied, lines = self.json_output("data_loader.py", plan=self.plan(self.FIX))
        self.assertEqual((applied["num_workers"], applied["persistent_workers"]), (2, True))
        self.assertEqual(applied["batches"], plain["batches"])
        self.assertIn("applied: DataLoader with at least 2 workers", lines[0])

    def test_script_asking_for_more_workers_keeps_them(self):
        applied, _ = self.json_output("data_loader.py", "--workers", "3", plan=self.plan(self.FIX))
        self.assertEqual(applied["num_workers"], 3)

    def test_loader_built_with_positional_arguments_is_left_alone(self):
        applied, _ = self.json_output("data_loader.py", "--positional", plan=self.plan(self.FIX))
        self.assertEqual((applied["num_workers"], applied["persistent_workers"]), (0, False))


class GlobalSettings(PlanCase):
    def test_tf32_sets_the_matmul_and_cudnn_flags(self):
        plain, _ = self.json_output("settings.py")
        applied, lines = self.json_output("settings.py", plan=self.plan({"kind": "precision", "setting": "tf32"}))
        self.assertFalse(plain["matmul_tf32"])
        self.assertTrue(applied["matmul_tf32"] and applied["cudnn_tf32"])
        self.assertIn("applied: TF32 matmuls and convolutions", lines[0])

    def test_allocator_setting_goes_to_pytorch_cuda_alloc_conf(self):
        plan = self.plan({"kind": "allocator", "setting": "expandable_segments:True"})
        applied, _ = self.json_output("settings.py", plan=plan)
        self.assertEqual(applied["alloc_conf"], "expandable_segments:True")

    def test_xlas_allocator_setting_is_left_to_the_jax_bridge(self):
        # The plan of a program that runs both: XLA's variable is set, never PyTorch's allocator configuration.
        plan = self.plan({"kind": "allocator", "variable": "XLA_PYTHON_CLIENT_PREALLOCATE", "setting": "false"})
        applied, lines = self.json_output("settings.py", plan=plan)
        self.assertIsNone(applied["alloc_conf"])
        self.assertEqual(lines, ["gpuscope apply: allocator-1 (allocator): not applied: XLA_PYTHON_CLIENT_PREALLOCATE "
                                 "set, but the program never imported jax"])

    def test_cudnn_attention_is_switched_off(self):
        plain, _ = self.json_output("settings.py")
        applied, lines = self.json_output("settings.py", plan=self.plan({"kind": "attention",
                                                                          "setting": "no_cudnn_sdp"}))
        self.assertTrue(plain["cudnn_sdp"])
        self.assertFalse(applied["cudnn_sdp"])
        self.assertIn("applied: cuDNN's attention off", lines[0])

    def test_attention_fix_is_reported_as_needing_a_code_change(self):
        _, lines = self.json_output("settings.py", plan=self.plan({"kind": "attention", "setting": "sdpa"}))
        self.assertEqual(lines, ["gpuscope apply: attention-1 (attention): not applied: needs the model's code "
                                 "changed (the advice shows how)"])


class FixesForTheModel(PlanCase):
    """Fixes applied to the model at its first forward are said to be applied only once they are: a step
    written as a plain function has no model, and is told so at exit."""

    FIXES = ({"kind": "precision", "setting": "bf16_autocast"}, {"kind": "fusion"}, {"kind": "cuda_graphs"})

    def test_a_plain_function_is_told_nothing_was_applied(self):
        plain = support.run_ok(self, "plain_function.py")
        applied = support.run_ok(self, "plain_function.py", plan=self.plan(*self.FIXES))
        self.assertEqual(applied.stdout, plain.stdout)
        lines = support.bridge_lines(applied.stderr)
        self.assertEqual(len(lines), 6, applied.stderr)
        self.assertTrue(all("waiting for the model's first forward" in line for line in lines[:3]), lines)
        self.assertTrue(all("not applied: no nn.Module's forward ran" in line for line in lines[3:]), lines)
        self.assertFalse(any(": applied" in line for line in lines), lines)

    def test_a_model_is_told_when_autocast_takes_hold(self):
        result = support.run_ok(self, "plain_function.py", "--model", plan=self.plan(self.FIXES[0]))
        lines = support.bridge_lines(result.stderr)
        self.assertEqual(len(lines), 2, result.stderr)
        self.assertIn("applied: each forward of Linear runs under torch.autocast(bfloat16)", lines[1])


class FirstCallAsWritten(PlanCase):
    def test_autocast_takes_effect_from_the_second_call(self):
        plain, _ = self.json_output("autocast_calls.py")
        applied, lines = self.json_output("autocast_calls.py",
                                          plan=self.plan({"kind": "precision", "setting": "bf16_autocast"}))
        self.assertEqual(plain, [0, 0, 0, 0])
        self.assertEqual(applied, [0, 1, 1, 1])
        self.assertIn("applied: each forward of Probe runs under torch.autocast(bfloat16)", lines[1])

    def test_a_featurizer_called_before_the_model_gets_no_autocast(self):
        """A module with no parameters called at top level is no model: under autocast its output (a speech
        script's log-mel features) became bf16, which the model's first convolution met as written in the
        check's calls, and the program failed (bench/corpus/audio_conformer_ctc_fp32, H200)."""
        applied, lines = self.json_output("autocast_calls.py", "--featurizer",
                                          plan=self.plan({"kind": "precision", "setting": "bf16_autocast"}))
        self.assertEqual(applied, {"featurizer": [0, 0, 0, 0], "model": [0, 1, 1, 1]})
        self.assertIn("applied: each forward of Probe runs under torch.autocast(bfloat16)", lines[1])


class ScriptCheckpointsItself(PlanCase):
    def test_a_recomputed_block_gets_no_autocast_of_its_own(self):
        """The script's own checkpointing recomputes each block in the backward pass, at top level: the bridge
        must not take that for a model's call and enter autocast there (PyTorch restores the forward's autocast
        state itself). It did, and on the GPU a checkpointed MLP's backward raised CheckpointError: its blocks
        were recomputed in bf16 where the first forward had been fp32."""
        plan = self.plan({"kind": "precision", "setting": "bf16_autocast"})
        plain, _ = self.json_output("checkpoint_recompute.py")
        applied, lines = self.json_output("checkpoint_recompute.py", plan=plan)
        self.assertEqual(len(applied), len(plain))
        self.assertEqual([recomputing for recomputing, _ in applied], [recomputing for recomputing, _ in plain])
        forwards = [depth for recomputing, depth in applied if not recomputing]
        recomputed = [depth for recomputing, depth in applied if recomputing]
        self.assertEqual(len(recomputed), 6)  # two blocks, three steps
        self.assertEqual(forwards, [0, 0, 1, 1, 1, 1])  # the model's first call runs as written
        self.assertEqual(recomputed, [0] * 6)
        self.assertTrue(any("applied: each forward of Model runs under torch.autocast" in line for line in lines))


class Guards(PlanCase):
    """A fix that fails inside the program is rolled back, and the program goes on as the script wrote it."""

    def test_a_compile_that_fails_is_rolled_back(self):
        # Inductor compiles C++ on the CPU: with no working compiler, the first compiled call raises.
        no_compiler = {"CXX": "/bin/false"}
        plain = f"{self.tmp}/plain.pt"
        support.run_ok(self, "gradients.py", plain, "--model", "transformer", extra_env=no_compiler)
        out = f"{self.tmp}/guarded.pt"
        result = support.run_ok(self, "gradients.py", out, "--model", "transformer",
                                plan=self.plan({"kind": "fusion"}), extra_env=no_compiler)
        lines = support.bridge_lines(result.stderr)
        self.assertIn("applied: Transformer.forward compiled", lines[1])
        self.assertEqual(len(lines), 3, result.stderr)
        self.assertIn("fusion-1 (fusion): rolled back: InductorError: InvalidCxxCompiler", lines[2])
        expected, got = torch.load(plain), torch.load(out)
        self.assertTrue(all(torch.equal(a, b) for a, b in zip(expected["losses"], got["losses"])))
        for name, grad in expected["grads"].items():
            self.assertTrue(torch.equal(grad, got["grads"][name]), name)


    def test_autocast_that_breaks_the_forward_is_rolled_back(self):
        plain, _ = self.json_output("expert_routing.py")
        applied, lines = self.json_output("expert_routing.py",
                                          plan=self.plan({"kind": "precision", "setting": "bf16_autocast"}))
        self.assertEqual(applied, plain)  # the failed call ran again as written, and every later one
        self.assertEqual(len(lines), 3, lines)
        self.assertIn("applied: each forward of ExpertRouting runs under torch.autocast(bfloat16)", lines[1])
        self.assertIn("precision-1 (precision): rolled back: RuntimeError: Index put requires the source and "
                      "destination dtypes match", lines[2])

    def test_autocast_leaves_the_outputs_the_dtype_the_script_wrote_them(self):
        """The code after the model is the script's, which no guard covers: its outputs stay fp32 where the calls as
        written returned fp32, so that a DCGAN's BCELoss (no mixed dtypes) does not raise in the script."""
        plain, _ = self.json_output("gan_bce.py")
        applied, lines = self.json_output("gan_bce.py",
                                          plan=self.plan({"kind": "precision", "setting": "bf16_autocast"}))
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("applied: each forward of Discriminator runs under torch.autocast(bfloat16)", lines[1])
        self.assertEqual(applied[0], plain[0])  # the first call as written
        self.assertTrue(all(abs(a - p) < 0.01 * abs(p) for a, p in zip(applied, plain)), (applied, plain))
        self.assertNotEqual(applied[1:], plain[1:])  # in bf16 from the second call

    def test_autocast_hands_back_the_state_of_a_recurrent_model_in_fp32(self):
        """cuDNN's LSTM returns its hidden state in fp16 under any CUDA autocast; the word-level language model feeds
        it to its next call, which raised where that call ran without the plan's autocast (the timing check's calls
        as written: the program ended with exit code 1, H200, bench/corpus/pt_word_language_model)."""
        plain, _ = self.json_output("lstm_state.py")
        applied, lines = self.json_output("lstm_state.py",
                                          plan=self.plan({"kind": "precision", "setting": "bf16_autocast"}))
        self.assertIn("applied: each forward of RNNModel runs under torch.autocast(bfloat16)", lines[1])
        self.assertFalse(any("rolled back" in line for line in lines), lines)
        self.assertEqual(applied[0], plain[0])  # the first call as written
        self.assertTrue(all(abs(a - p) < 0.01 * abs(p) for a, p in zip(applied, plain)), (applied, plain))

    def test_autocast_under_a_compile_that_fails_is_rolled_back_too(self):
        no_compiler = {"CXX": "/bin/false"}
        plan = self.plan({"kind": "precision", "setting": "bf16_autocast"}, {"kind": "fusion"})
        plain = support.run_ok(self, "expert_routing.py", extra_env=no_compiler)
        applied = support.run_ok(self, "expert_routing.py", plan=plan, extra_env=no_compiler)
        self.assertEqual(json.loads(applied.stdout), json.loads(plain.stdout))
        lines = support.bridge_lines(applied.stderr)
        self.assertTrue(any("fusion-2 (fusion): rolled back" in line for line in lines), lines)
        self.assertTrue(any("precision-1 (precision): rolled back: RuntimeError: Index put" in line for line in lines),
                        lines)


class ModelCopies(PlanCase):
    """A model's copies made after the fixes went in (the best model so far, an EMA, torch.save of the whole
    model) are the model as its class defines it, with the weights they were made with."""

    def assert_copies_as_written(self, *fixes):
        plain, _ = self.json_output("model_copies.py")
        applied, lines = self.json_output("model_copies.py", plan=self.plan(*fixes))
        self.assertTrue(any(": applied" in line for line in lines), lines)
        self.assertNotAlmostEqual(plain["deepcopy"], plain["model"], places=3)  # the copies kept their weights
        for name, value in plain.items():
            self.assertAlmostEqual(applied[name], value, delta=1e-5 * abs(value), msg=name)

    def test_under_autocast(self):
        self.assert_copies_as_written({"kind": "precision", "setting": "bf16_autocast"})

    def test_of_a_compiled_model(self):
        self.assert_copies_as_written({"kind": "fusion"})


class CompiledForward(PlanCase):
    def test_keeps_the_signature_callers_read(self):
        plain, _ = self.json_output("signature.py")
        applied, lines = self.json_output("signature.py", plan=self.plan({"kind": "fusion"}))
        self.assertIn("applied: Decoder.forward compiled", lines[1])
        self.assertEqual(applied, plain)
        self.assertEqual(plain["shapes"][-1], [1, 1, 32])

    def test_calls_by_position_and_by_keyword_compile_once(self):
        # A forward wrapped in a decorator taking *args (as transformers wraps them), called positionally in the
        # warm-up and by keyword in the loop, compiles as often as one called positionally throughout.
        plan = self.plan({"kind": "fusion"})
        plain, _ = self.json_output("call_styles.py")
        mixed, lines = self.json_output("call_styles.py", plan=plan)
        positional, _ = self.json_output("call_styles.py", "--positional", plan=plan)
        self.assertIn("applied: Classifier.forward compiled", lines[1])
        self.assertGreater(positional["frames"], 0)
        self.assertEqual(mixed["frames"], positional["frames"])
        self.assertEqual(plain["frames"], 0)
        for got, expected in zip(mixed["sums"], plain["sums"]):
            self.assertAlmostEqual(got, expected, places=3)


    def test_compiles_once_for_evaluation_and_once_for_training(self):
        # Evaluated under no_grad first (the compile's first call), then trained: the training calls compile once
        # for their own way of calling the model, rather than running as written for the rest of the program.
        plain, _ = self.json_output("eval_then_train.py")
        applied, lines = self.json_output("eval_then_train.py", plan=self.plan({"kind": "fusion"}))
        self.assertIn("applied: Sequential.forward compiled", lines[1])
        self.assertEqual(applied["frames"], 2)
        self.assertEqual(applied["evaluated"], plain["evaluated"])
        for got, expected in zip(applied["trained"], plain["trained"]):
            self.assertAlmostEqual(got, expected, places=3)


class ScriptCompilesItself(PlanCase):
    def test_a_compiled_model_is_not_compiled_again(self):
        plain = f"{self.tmp}/plain.pt"
        support.run_ok(self, "gradients.py", plain, "--model", "transformer", "--compile")
        out = f"{self.tmp}/applied.pt"
        result = support.run_ok(self, "gradients.py", out, "--model", "transformer", "--compile",
                                plan=self.plan({"kind": "fusion"}))
        lines = support.bridge_lines(result.stderr)
        self.assertIn("fusion-1 (fusion): not applied to OptimizedModule: the script compiles the model itself",
                      lines[-1])
        expected, got = torch.load(plain), torch.load(out)
        for name, grad in expected["grads"].items():
            self.assertTrue(torch.equal(grad, got["grads"][name]), name)


class GradientAccumulation(PlanCase):
    """torch.compile's CUDA graphs fail under gradient accumulation (pytorch/pytorch#169545): the bridge compiles
    the model without them when it sees a second forward before the optimizer steps, or when the plan says so."""

    def test_a_second_micro_batch_turns_the_graphs_off_and_keeps_the_compile(self):
        plain = f"{self.tmp}/plain.pt"
        support.run_ok(self, "gradients.py", plain, "--model", "transformer", "--accumulate", "3")
        out = f"{self.tmp}/graphs.pt"
        result = support.run_ok(self, "gradients.py", out, "--model", "transformer", "--accumulate", "3",
                                plan=self.plan({"kind": "cuda_graphs"}, {"kind": "fusion"}))
        lines = support.bridge_lines(result.stderr)
        self.assertIn("cuda_graphs-1 (cuda_graphs): applied: Transformer.forward compiled (mode 'reduce-overhead')",
                      result.stderr)
        self.assertIn("cuda_graphs-1 (cuda_graphs): rolled back: the model runs more than one forward "
                      "(micro-batches) per optimizer step", result.stderr)
        self.assertNotIn("fusion-2 (fusion): rolled back", result.stderr)
        self.assertEqual(len([line for line in lines if "rolled back" in line]), 1, result.stderr)
        expected, got = torch.load(plain), torch.load(out)
        self.assertEqual(len(got["losses"]), 6)
        for name, grad in expected["grads"].items():
            torch.testing.assert_close(got["grads"][name], grad, msg=name)

    def test_one_forward_per_step_keeps_the_graphs(self):
        result = support.run_ok(self, "gradients.py", f"{self.tmp}/out.pt", "--model", "transformer",
                                plan=self.plan({"kind": "cuda_graphs"}))
        self.assertNotIn("rolled back", result.stderr)

    def test_a_hand_written_optimizer_that_steps_every_forward_keeps_the_graphs(self):
        # No torch.optim step to count: the parameters changed in place between the calls say a step was taken.
        result = support.run_ok(self, "gradients.py", f"{self.tmp}/out.pt", "--model", "transformer",
                                "--own-optimizer", "--steps", "5", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertIn("cuda_graphs-1 (cuda_graphs): applied", result.stderr)
        self.assertNotIn("rolled back", result.stderr)

    def test_micro_batches_before_a_hand_written_optimizer_still_turn_the_graphs_off(self):
        result = support.run_ok(self, "gradients.py", f"{self.tmp}/out.pt", "--model", "transformer",
                                "--own-optimizer", "--accumulate", "2", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertIn("cuda_graphs-1 (cuda_graphs): rolled back: the model runs more than one forward "
                      "(micro-batches) per optimizer step", result.stderr)

    def test_a_plan_that_knows_the_micro_batches_compiles_without_graphs(self):
        result = support.run_ok(self, "gradients.py", f"{self.tmp}/out.pt", "--model", "transformer",
                                "--accumulate", "2",
                                plan=self.plan({"kind": "cuda_graphs", "forwards_per_step": 2}, {"kind": "fusion"}))
        self.assertIn("cuda_graphs-1 (cuda_graphs): not applied: the model runs 2 forwards (micro-batches) per "
                      "optimizer step", result.stderr)
        self.assertIn("fusion-2 (fusion): applied: Transformer.forward compiled (mode 'default')", result.stderr)
        self.assertNotIn("rolled back", result.stderr)


class CarriedState(PlanCase):
    """CUDA graphs replay into the same memory, so a forward handed what its previous call returned (a KV cache,
    a recurrent state) keeps no graphs; one handed a new tensor that reuses a freed output's address keeps them."""

    def test_a_recurrent_state_handed_back_rolls_the_graphs_back(self):
        plain, _ = self.json_output("carried_state.py", "carry")
        applied, lines = self.json_output("carried_state.py", "carry", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertIn("applied: Cell.forward compiled (mode 'reduce-overhead')", lines[1])
        self.assertIn("cuda_graphs-1 (cuda_graphs): rolled back: CUDA graphs: the forward is handed tensors its "
                      "previous call returned", lines[-1])
        torch.testing.assert_close(applied["losses"], plain["losses"], rtol=1e-5, atol=0)

    def test_a_fresh_state_keeps_them(self):
        _, lines = self.json_output("carried_state.py", "fresh", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertFalse([line for line in lines if "rolled back" in line], lines)

    def test_memory_still_held_is_carried_and_a_reused_address_is_not(self):
        sys.path.insert(0, str(support.BRIDGE))
        from gpuscope_torch import values  # its functions only: nothing is installed in this process

        # A staging buffer the loader refills: each batch wraps the same memory, in a storage of its own.
        buffer = numpy.zeros((16, 64), dtype=numpy.float32)
        returned = torch.from_numpy(buffer)
        refs = values.storages([returned])
        self.assertTrue(values.carried([returned.detach()], refs))
        self.assertTrue(values.carried([returned[4:]], refs))  # a view of it
        address = returned.data_ptr()
        del returned
        batch = torch.from_numpy(buffer)
        self.assertEqual(batch.data_ptr(), address)
        self.assertFalse(values.carried([batch], refs))


class KeptOutputs(PlanCase):
    """An evaluation loop that keeps every batch's outputs would read them overwritten after graph replays: its
    CUDA graphs are rolled back; one that holds only the latest outputs keeps them."""

    def test_outputs_kept_across_calls_roll_the_graphs_back(self):
        plain, _ = self.json_output("kept_outputs.py", "kept")
        applied, lines = self.json_output("kept_outputs.py", "kept", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertIn("cuda_graphs-1 (cuda_graphs): rolled back: CUDA graphs: the caller keeps the outputs of earlier "
                      "calls", lines[-1])
        torch.testing.assert_close(applied["sums"], plain["sums"], rtol=1e-5, atol=1e-5)

    def test_only_the_latest_outputs_held_keeps_them(self):
        _, lines = self.json_output("kept_outputs.py", "latest", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertFalse([line for line in lines if "rolled back" in line], lines)

    def test_a_graph_replays_cached_outputs_are_not_the_callers(self):
        """From its first replay on, a CUDA graph tree hands back the same output tensors at every call, cached
        and kept alive by the tree (torch._C._add_cached_tensor): a video classifier that kept only each batch's
        labels had its graphs rolled back as keeping its outputs (bench/corpus/pt_video_frames_serial_copy,
        H200, 2026-12-01). Those outputs are not judged; the calls' own new ones are."""
        sys.path.insert(0, str(support.BRIDGE))
        from gpuscope_torch import apply  # its functions only: nothing is installed in this process
        from gpuscope_torch import values

        replayed, made = torch.zeros(4), torch.zeros(4)
        torch._C._set_cached_tensors_enabled(True)
        try:
            torch._C._add_cached_tensor(replayed)
            self.assertEqual(apply._fresh([replayed, made]), [made])
            recent = [values.storages(apply._fresh([replayed]))] * 2
            self.assertFalse(apply._kept(recent))
        finally:
            torch._C._remove_cached_tensor(replayed)
            torch._C._set_cached_tensors_enabled(False)
        self.assertTrue(apply._kept([values.storages([made]), []]))  # a call's own output, still held


class AttributeState(PlanCase):
    """CUDA graphs replay into the same memory, so a forward that stores tensors in the model's attributes at
    every call (torchvision's anchor generator) is compiled again without them; one that fills such an
    attribute once, at its first call, keeps them."""

    def test_an_attribute_rebuilt_at_every_call_turns_the_graphs_off(self):
        plain, _ = self.json_output("attribute_state.py", "rebuilt")
        applied, lines = self.json_output("attribute_state.py", "rebuilt", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertIn("cuda_graphs-1 (cuda_graphs): rolled back: the forward stores tensors in the model's "
                      "attributes (anchors.cell_anchors), kept from call to call", lines[-1])
        torch.testing.assert_close(applied["sums"], plain["sums"], rtol=1e-5, atol=1e-5)

    def test_distributed_data_parallels_buffer_lists_are_the_models_own_state(self):
        # DDP lists its module's buffers anew before every call (to broadcast them); that list is no state the
        # forward keeps: the batch norm's running statistics are the model's buffers, updated in place.
        sys.path.insert(0, str(support.BRIDGE))
        from gpuscope_torch import apply  # its functions only: nothing is installed in this process

        with tempfile.TemporaryDirectory() as folder:
            torch.distributed.init_process_group("gloo", init_method=f"file://{folder}/store", rank=0, world_size=1)
            try:
                model = torch.nn.parallel.DistributedDataParallel(
                    torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()))
                before = apply._attribute_tensors(model)
                model(torch.randn(2, 3, 8, 8)).sum().backward()
                self.assertEqual(apply._rebound(before, model), [])
            finally:
                torch.distributed.destroy_process_group()

    def test_an_attribute_filled_once_keeps_them(self):
        _, lines = self.json_output("attribute_state.py", "cached", plan=self.plan({"kind": "cuda_graphs"}))
        self.assertIn("applied: Detector.forward compiled (mode 'reduce-overhead')", lines[-1])
        self.assertFalse([line for line in lines if "rolled back" in line], lines)


class Checked(PlanCase):
    """With the timing check on (as `gpuscope apply` runs it), a fix that makes the model's calls slower is
    rolled back and the program goes on as the script wrote it."""

    CHECK = {"GPUSCOPE_APPLY_CHECK": "1"}

    def test_a_forward_whose_shapes_change_at_every_call_compiles_once(self):
        # Every call of the scorer has a new length: compiled by hand, each would compile again (seconds against a
        # millisecond as written); with torch's automatic dynamic shapes, the third would compile once more.
        # Compiled by the plan, the forward compiles at its first call and the later ones run as written.
        for dynamic in ((), ("--automatic-dynamic",)):
            with self.subTest(dynamic=dynamic):
                plain = support.run_ok(self, "varlen.py", *dynamic, extra_env=self.CHECK)
                applied = support.run_ok(self, "varlen.py", *dynamic, plan=self.plan({"kind": "fusion"}),
                                         extra_env=self.CHECK)
                self.assertEqual(_checksum(applied.stdout), _checksum(plain.stdout))  # every batch scored alike
                self.assertIn("frames compiled 1", applied.stdout)
                lines = support.bridge_lines(applied.stderr)
                self.assertIn("applied: Scorer.forward compiled (mode 'default')", lines[1])

    def test_a_forward_whose_shapes_change_after_the_check_is_not_compiled_again(self):
        # One length through the check (calls 5-10), so the compile is kept; a new length from call 15 on, which
        # runs as written rather than compiling again in the program's later steps.
        plain = support.run_ok(self, "changes_later.py", "shapes", extra_env=self.CHECK)
        applied = support.run_ok(self, "changes_later.py", "shapes", plan=self.plan({"kind": "fusion"}),
                                 extra_env=self.CHECK)
        self.assertEqual(applied.stdout.split(",")[0], plain.stdout.split(",")[0])  # every batch smoothed
        self.assertIn("frames compiled 1", applied.stdout)
        lines = support.bridge_lines(applied.stderr)
        self.assertRegex(lines[-1], r"fusion-1 \(fusion\): checked: Smoother.forward took")

    def test_calls_far_slower_than_the_recorded_step_after_the_check_roll_the_compile_back(self):
        # 20 ms a step on the recording; from call 15 on, 100 ms from one call to the next.
        plan = support.write_plan(self.tmp, [{"kind": "fusion"}], step_time_ns=20_000_000)
        applied = support.run_ok(self, "changes_later.py", "pauses", plan=plan, extra_env=self.CHECK)
        self.assertIn("smoothed 40 batches", applied.stdout)
        lines = support.bridge_lines(applied.stderr)
        self.assertRegex(lines[-2], r"fusion-1 \(fusion\): checked: Smoother.forward took")
        self.assertRegex(lines[-1], r"fusion-1 \(fusion\): rolled back: slower after the check: 1\d\d\.\d+ ms from "
                                    r"one call to the next at the median of calls 12-32, against a step of 20.000 ms "
                                    r"on the recording")

    def test_the_windows_take_off_what_gpuscopes_module_hooks_cost(self):
        # Autocast keeps every module call going through the hooks, so every one of them is counted.
        plan = self.plan({"kind": "precision", "setting": "bf16_autocast"})
        result = support.run_ok(self, "hook_cost.py", "12", plan=plan, extra_env=self.CHECK)
        out, lines = json.loads(result.stdout), support.bridge_lines(result.stderr)
        # Each call: the root, its Linear and 50 ReLUs; not the probe's calls. The hooks go at call 11 where the
        # check rolls autocast back, its root's call the last counted.
        self.assertIn(out["module_calls"], (10 * 52 + 1, 12 * 52))
        self.assertEqual(len(out["hook_cost_s"]), 1)
        self.assertGreater(out["hook_cost_s"][0], 0)
        self.assertLess(out["hook_cost_s"][0], 1e-3)
        self.assertRegex(lines[-1], r"precision-1 \(precision\): (checked|rolled back: slower): Sequential.forward "
                                    r"took [\d.]+ ms per call with the fixes \(calls 5-7\) and [\d.]+ ms as written "
                                    r"\(calls 9-10\), gpuscope's module hooks \([\d.]+ us per module call\) taken off")

    def test_a_roll_back_inside_the_window_starts_the_check_over(self):
        # The compile fails at call 6, inside the window of calls 5-7, and the call run as written then pays a
        # one-off 0.3 s: the window starts over three calls later, so autocast is timed without it.
        plan = self.plan({"kind": "fusion"}, {"kind": "precision", "setting": "bf16_autocast"})
        plain = support.run_ok(self, "first_run_cost.py", extra_env=self.CHECK)
        applied = support.run_ok(self, "first_run_cost.py", plan=plan, extra_env=self.CHECK)
        self.assertEqual(json.loads(applied.stdout), json.loads(plain.stdout))
        lines = support.bridge_lines(applied.stderr)
        self.assertTrue(any("fusion-1 (fusion): rolled back: RuntimeError: a one-off failure" in line
                            for line in lines), lines)
        window = [re.search(r"precision-2 \(precision\): (?:checked|rolled back: slower): Net.forward took ([\d.]+) "
                            r"ms per call with the fixes \(calls 10-12\)", line) for line in lines]
        window = [found for found in window if found]
        self.assertEqual(len(window), 1, lines)
        self.assertLess(float(window[0].group(1)), 50.0)

    def test_a_program_too_short_to_time_is_told_its_fixes_were_not_checked(self):
        applied = support.run_ok(self, "varlen.py", "3", plan=self.plan({"kind": "fusion"}), extra_env=self.CHECK)
        lines = support.bridge_lines(applied.stderr)
        self.assertEqual(len(lines), 3, applied.stderr)
        self.assertIn("fusion-1 (fusion): not checked: the program called Scorer.forward 3 times, the timing check "
                      "needs 11", lines[2])


def _checksum(stdout):
    """A program's line of results up to its count of compiled frames, which differs with a plan that compiles."""
    return stdout.split(", frames compiled")[0]


class ResultsChecked(PlanCase):
    """With the run as written's values (GPUSCOPE_VALUES_REF), the timing check also compares the results: a fix
    that changes them beyond its tolerance is rolled back, whatever its speed."""

    def applied(self, *args, recorded=False, written_s=None, predicted_ns=1, fix="checkpoint"):
        support.run_as_written("results.py", *args, values_out=self.tmp)
        if written_s is not None:  # the run as written's calls 5-7 said to have taken this long
            reference = pathlib.Path(self.tmp, "values-0.json")
            values = json.loads(reference.read_text())
            values["timed"]["per_call_s"] = written_s(values["timed"]["per_call_s"])
            reference.write_text(json.dumps(values))
        env = {"GPUSCOPE_APPLY_CHECK": "1", "GPUSCOPE_VALUES_REF": self.tmp}
        if recorded:  # apply --record: the run with the plan is recorded, the run as written is not
            env.update(GPUSCOPE_TORCH="apply,record", GPUSCOPE_OUTPUT_DIR=self.tmp)
        # The plan's step as recorded: a second (this CPU's first calls of the model take half a second each, which
        # against a shorter step would read as compiling again).
        plan = support.write_plan(self.tmp, [{"kind": fix}], step_time_ns=10**9, predicted_ns=predicted_ns)
        result = support.run_ok(self, "results.py", *args, plan=plan, extra_env=env)
        return support.bridge_lines(result.stderr)

    def test_checkpointing_blocks_that_update_batchnorm_statistics_keeps_the_results(self):
        lines = self.applied("--batchnorm")
        # Recomputed in the backward, each block's BatchNorm would update its running statistics a second time:
        # they are put back after the recomputation.
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): (checked|rolled back: slower): ")
        self.assertRegex(lines[3], r"^gpuscope apply: results as the run as written: .* buffers at 4 calls compared")

    def test_a_plan_that_says_it_costs_time_is_held_to_what_it_said(self):
        # The run as written said to have taken a third of its time: the calls with the fixes are three times or
        # more slower. A plan that said it costs 20 times the step (a memory plan says what its checkpointing
        # costs) keeps the fix; one that said nothing of it rolls it back.
        said = self.applied(written_s=lambda s: s / 3, predicted_ns=20 * 10**9)
        self.assertRegex(said[2], r"checkpoint-1 \(checkpoint\): checked: ")
        unsaid = self.applied(written_s=lambda s: s / 3)
        self.assertRegex(unsaid[2], r"checkpoint-1 \(checkpoint\): rolled back: slower: .*\(calls 5-7 of the run as "
                                    r"written\), gpuscope's module hooks \([\d.]+ us per module call\) taken off$")

    def test_checkpointing_blocks_without_state_keeps_the_results(self):
        lines = self.applied()
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): (checked|rolled back: slower): ")
        self.assertRegex(lines[3], r"^gpuscope apply: results as the run as written: the loss of steps 1-14 and the "
                                   r"model's outputs and buffers at 4 calls compared, the largest difference [\d.]+ % "
                                   r"\(.*, tolerance 0.1 %: ")

    def test_the_fixes_are_timed_against_the_same_calls_of_the_run_as_written(self):
        # Said to have taken a thousand times longer: far apart, whatever this process's own speed.
        lines = self.applied(written_s=lambda s: s * 1000)
        timed = json.loads(pathlib.Path(self.tmp, "values-0.json").read_text())["timed"]
        self.assertEqual(timed["model"], "Classifier")
        self.assertEqual(timed["calls"], [5, 8])
        self.assertGreater(timed["per_call_s"], 0)
        # The check decides when the fixed window closes: the model never runs as written in this run.
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): checked: Classifier.forward "
                                   r"took [\d.]+ ms per call with the fixes \(calls 5-7\) and [\d.]+ ms as written "
                                   r"\(calls 5-7 of the run as written\)")

    def test_calls_too_close_to_the_run_as_writtens_are_timed_as_written_here_too(self):
        # 200 ms of host work a step sets both runs' pace: the two processes' own difference in speed could decide
        # between them, so calls 9-10 run as written in the run with the plan.
        lines = self.applied("--host-ms", "200")
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): (checked|rolled back: slower): Classifier.forward "
                                   r"took [\d.]+ ms per call with the fixes \(calls 5-7\) and [\d.]+ ms as written "
                                   r"\(calls 9-10; calls 5-7 of the run as written took [\d.]+ ms, too close to tell "
                                   r"apart across two processes\)")

    def test_a_pause_outside_the_model_is_left_out_of_a_window(self):
        # 1.2 s once between calls 9 and 10, as a DataLoader starting its workers again at an epoch's first batch:
        # a window's mean took it for the calls as written (800 ms a call and more against 200), and kept slower
        # fixes. The step's own 200 ms of host work keeps the fixes' window and the run as written's too close to
        # tell apart across processes (_apart) on a slow CPU too, so that the calls as written are timed here: with
        # 40 ms, checkpointing's recomputation on a loaded two-core machine took 75 ms a call against 41.
        lines = self.applied("--host-ms", "200", "--pause-after", "9", "--pause-ms", "1200")
        found = re.search(r"took [\d.]+ ms per call with the fixes \(calls 5-7\) and ([\d.]+) ms as written \(calls "
                          r"9-10; calls 5-7 of the run as written took", lines[2])
        self.assertIsNotNone(found, lines)
        self.assertLess(float(found.group(1)), 400.0)

    def test_only_calls_far_apart_are_judged_across_processes(self):
        sys.path.insert(0, str(support.BRIDGE))
        from gpuscope_torch import apply  # its functions only: nothing is installed in this process

        self.assertTrue(apply._apart(0.7, 1.0))  # 30 % faster: kept without calls as written here
        self.assertTrue(apply._apart(1.6, 1.0))  # 60 % slower: rolled back without them
        self.assertFalse(apply._apart(0.9, 1.0))
        self.assertFalse(apply._apart(1.2, 1.0))

    def test_only_a_plan_that_says_it_costs_time_may_be_slower(self):
        sys.path.insert(0, str(support.BRIDGE))
        from gpuscope_torch import apply  # its functions only: nothing is installed in this process

        saved = apply._plan_slower[0]
        try:
            apply._plan_slower[0] = 1.0  # a time plan: not slower at all
            self.assertEqual(apply._slower_than_said(), apply._SLOWER)
            apply._plan_slower[0] = 1.4  # a memory plan that said 40 % slower: that and 15 % more
            self.assertAlmostEqual(apply._slower_than_said(), 1.4 * 1.15)
        finally:
            apply._plan_slower[0] = saved

    def test_a_recorded_run_times_both_windows_itself(self):
        # CUPTI's cost per launch is in the recorded run's windows alone: both are timed in it, as without a run as
        # written.
        lines = self.applied(recorded=True)
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): (checked|rolled back: slower): Classifier.forward "
                                   r"took [\d.]+ ms per call with the fixes \(calls 5-7\) and [\d.]+ ms as written "
                                   r"\(calls 9-10\)")

    def test_eight_calls_are_enough_with_the_run_as_written(self):
        # Seven training steps and the evaluation: the check needs 8 calls here, 11 without the run as written.
        lines = self.applied("--steps", "7", written_s=lambda s: s * 1000)
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): (checked|rolled back: slower): ")
        plan = support.write_plan(self.tmp, [{"kind": "checkpoint"}], step_time_ns=10**9)
        alone = support.run_ok(self, "results.py", "--steps", "7", plan=plan, extra_env={"GPUSCOPE_APPLY_CHECK": "1"})
        self.assertIn("not checked: the program called Classifier.forward 8 times, the timing check needs 11",
                      support.bridge_lines(alone.stderr)[2])

    def test_changed_results_are_rolled_back_before_the_timing_check(self):
        # Six steps and the evaluation: too few calls for the timing check (8), but after a step whose blocks were
        # recomputed (each counting its calls twice) the model's second call already differs from the run as
        # written, and the fix goes at once, at the third.
        lines = self.applied("--counter", "--steps", "6")
        self.assertRegex(lines[2], r"checkpoint-1 \(checkpoint\): rolled back: changed results: the model's outputs at "
                                   r"call 2 differs by [\d.]+ % from the run as written \(tolerance 0.1 %")

    def test_a_compiled_forward_drawing_other_dropout_masks_keeps_the_compile(self):
        # torch.nn.functional.dropout in the forward, no dropout module: compiled, the forward draws other random
        # numbers than as written, and its outputs differ value by value. Only their shapes are compared.
        lines = self.applied("--dropout", "0.3", fix="fusion")
        self.assertRegex(lines[2], r"fusion-1 \(fusion\): (checked|rolled back: slower): ")
        self.assertRegex(lines[3], r"^gpuscope apply: results as the run as written: .*the model's outputs \(their "
                                   r"shapes only: dropout draws random numbers\)")

    def test_a_program_that_computes_other_values_each_run_is_not_compared(self):
        lines = self.applied("--unseeded")
        self.assertRegex(lines[3], r"^gpuscope apply: results not compared: the loss of step 1 differs by [\d.]+ % "
                                   r"from the run as written before any fix took effect")


class RanksAgree(unittest.TestCase):
    """In a torchrun job the ranks keep or roll back the checked fixes together, through the job's store."""

    TORCHRUN = (sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "--no-python")

    def answers(self, slow_ranks, close_ranks=""):
        with tempfile.TemporaryDirectory() as tmp:
            result = support.run_program("ranks_agree.py", tmp, slow_ranks, close_ranks, prefix=self.TORCHRUN)
            self.assertEqual(result.returncode, 0, result.stderr)
            return [json.loads(pathlib.Path(f"{tmp}/{rank}.json").read_text()) for rank in range(2)]

    def test_one_slower_rank_rolls_the_fixes_back_on_every_rank(self):
        self.assertEqual(self.answers("1"), [{"rank": 0, "apart": True, "slower": True, "where": " on rank 1 of 2"},
                                             {"rank": 1, "apart": True, "slower": True, "where": " on rank 1 of 2"}])

    def test_no_slower_rank_keeps_them_everywhere(self):
        self.assertEqual(self.answers(""), [{"rank": 0, "apart": True, "slower": False, "where": ""},
                                            {"rank": 1, "apart": True, "slower": False, "where": ""}])

    def test_one_rank_too_close_to_its_run_as_written_sends_every_rank_to_calls_as_written(self):
        # Else one rank would decide at call 8 and wait there for the verdict of another that runs calls 8-10 first.
        answers = self.answers("", "0")
        self.assertEqual([a["apart"] for a in answers], [False, False])


class BadPlans(PlanCase):
    """A plan the bridge cannot use: one line on stderr, and the program runs as without it."""

    def assertRunsOnWithOneWarning(self, plan, warning):
        plain = support.run_ok(self, "settings.py")
        applied = support.run_ok(self, "settings.py", plan=plan)
        self.assertEqual(applied.stdout, plain.stdout)
        lines = support.bridge_lines(applied.stderr)
        self.assertEqual(len(lines), 1, applied.stderr)
        self.assertIn(warning, lines[0])

    def test_missing_plan(self):
        self.assertRunsOnWithOneWarning(f"{self.tmp}/missing.json", "apply: cannot read the plan")

    def test_plan_that_is_not_json(self):
        plan = support.write_plan(self.tmp, [], raw="{not json")
        self.assertRunsOnWithOneWarning(plan, "apply: cannot read the plan")

    def test_plan_of_another_format(self):
        plan = support.write_plan(self.tmp, [], raw=json.dumps({"format": "other", "version": 1, "fixes": []}))
        self.assertRunsOnWithOneWarning(plan, "is not a gpuscope plan of version 1")

    def test_unknown_fix_kind(self):
        self.assertRunsOnWithOneWarning(self.plan({"kind": "teleport"}),
                                        "(teleport): not applied: gpuscope does not know this kind of fix")

    def test_unknown_precision_setting(self):
        self.assertRunsOnWithOneWarning(self.plan({"kind": "precision", "setting": "fp4"}),
                                        "not applied: unknown precision setting 'fp4'")


if __name__ == "__main__":
    unittest.main()


class RecordedWhileApplied(PlanCase):
    """`gpuscope apply --record`: where apply compiles the model, the recording's module hooks go before the
    compiler traces them in (their removal after the annotated steps would compile the model again, inside
    the program's timed steps); without a compiled model they stay for the annotated steps."""

    def run_recorded(self, fixes):
        with tempfile.TemporaryDirectory() as out:
            env = {"GPUSCOPE_TORCH": "apply,record", "GPUSCOPE_OUTPUT_DIR": out}
            return support.run_ok(self, "record_hooks.py", plan=self.plan(*fixes), extra_env=env)

    def test_hooks_go_at_the_first_call_of_a_compiled_model(self):
        self.assertIn("hook_free=True,True,True", self.run_recorded([{"kind": "fusion"}]).stdout)

    def test_hooks_stay_for_the_annotated_steps_otherwise(self):
        self.assertIn("hook_free=False,False,False", self.run_recorded([{"kind": "checkpoint"}]).stdout)
