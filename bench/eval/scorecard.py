"""The advisor's scorecard: each corpus case's result (run_corpus.py) judged against its truth file, and
the targets of the evaluation over the whole corpus, the fitted cases and the held-out ones apart.

Usage:
  python3 bench/eval/scorecard.py [-o STEM] RESULTS...          STEM.md and STEM.json (default docs/advisor-scorecard)
  python3 bench/eval/scorecard.py --rescore GPUSCOPE RESULTS... advise the stored traces again first

What counts (bench/corpus/README.md has the truth files' keys):
  found        a planted id among the program's findings
  wrong        a finding on the program that is neither planted nor allowed, or one on the clean twin that
               is not in clean_allowed
  step match   the advisor's step on the recorded run against the program's own clock in that same run
  prediction   the plan's predicted step against the program's clock under `apply` (and, apart, against the
               advisor's step on the `apply --record` run: its steady hook-free steps, no timing-check call
               among them), and its predicted peak against the peak measured in that trace; counted for plans with a fix
               reported applied. Where the advisor as it is now plans the very fixes `apply` ran, its own
               prediction is scored (after --rescore), else the applied plan's. Wrong direction: predicted
               faster (or slower) than the recorded step by more than 3 %, measured the other way against
               the plain run by more than 3 %
  took hold    a fix reported applied whose finding is gone from the re-recorded run's advice, or whose
               estimated gain there fell by half or more
  harmed       `apply` changed the program's exit code (as apply said it after the run with the plan: a time
               limit that stops apply's fix-by-fix search after it changes nothing), ran more than 5 % slower
               than the plain run by the program's clock (than the slowest of its plain runs, where a short
               program ran plain several times: two processes of one small host-bound program differ by up to
               1.75x; a plan predicted to cost time, a memory plan's checkpointing, more than 15 % slower than it
               said), or ended with results that differ from the run as written (a fix kept, or rolled back too
               late)
  results      what `apply` said of the results against the run as written: verified (within the stated
               tolerance), differ, or not compared
  over 100 %   any share of a step above 100 % printed in any finding
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import run_corpus  # beside this file: the plan of a goal made as the GPU run makes it

# "426.8 % of the 116 µs iteration", "12 % of the step"
SHARE_OF_STEP = re.compile(r"(\d+(?:\.\d+)?) ?% of (?:the |each |a )?(?:[\d.]+ \S+ )?(?:step|iteration)")
NOISE = 0.03


def load(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def rescore(gpuscope, folder):
    """Advises every stored trace of a result folder again with this build of gpuscope; a program whose truth
    names an apply_goal also gets that goal's plan (program.apply.plan.json, what `apply` runs with)."""
    for trace in sorted(folder.glob("*/*.gpuscope")):
        stem = trace.with_suffix("")
        commands = [[gpuscope, "advise", str(trace), "--format", "json", "-o", str(stem) + ".advice.json", "-f",
                     "--plan", str(stem) + ".plan.json"]]
        truth = load(run_corpus.CORPUS / trace.parent.name / "truth.json") or {}
        if truth.get("apply_goal") and stem.name == "program":
            commands.append(run_corpus.apply_plan_command(gpuscope, trace, truth["apply_goal"]))
        for command in commands:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                print(f"rescore: {trace}: {done.stderr.strip()}", file=sys.stderr)


def findings(advice):
    return [f["id"] for f in advice.get("findings", [])] if advice else []


def over_100(advice):
    """Shares of a step above 100 % anywhere in the findings' words."""
    bad = []
    for f in (advice or {}).get("findings", []):
        texts = [f.get("title", ""), f.get("summary", "")] + [e.get("text", "") for e in f.get("evidence", [])]
        share = f.get("estimated_gain", {}).get("share_of_step", 0)
        if share > 1.0:
            bad.append(f"{f['id']}: gain {share * 100:.0f} % of the step")
        for text in texts:
            if any(float(p) > 100.0 for p in SHARE_OF_STEP.findall(text)):
                bad.append(f"{f['id']}: {text[:120]}")
    return bad


def ratio(a, b):
    return a / b - 1.0 if a is not None and b else None


def judge_prediction(case, plan, after):
    """The plan's predicted step and peak against the measured re-run."""
    runs = case["runs"]
    plains, applied = plain_steps(case), runs.get("apply", {}).get("ms_step")
    plain = statistics.median(plains) if plains else None
    predicted = (plan or {}).get("predicted", {})
    measured = (plan or {}).get("measured", {})
    per_clock = steps_per_clock_step(case)
    out = {}
    if predicted.get("step_time_ns") and applied:
        pred_ms = per_clock * predicted["step_time_ns"] / 1e6
        before_ms = per_clock * measured.get("step_time_ns", 0) / 1e6
        out["step_predicted_ms"], out["step_measured_ms"] = round(pred_ms, 3), applied
        out["step_error"] = ratio(pred_ms, applied)
        predicted_change = ratio(pred_ms, before_ms) if before_ms else 0.0
        measured_change = ratio(applied, plain) if plain else 0.0
        out["wrong_direction"] = bool(predicted_change is not None and measured_change is not None and
                                      abs(predicted_change) > NOISE and abs(measured_change) > NOISE and
                                      (predicted_change > 0) != (measured_change > 0))
    # The advisor's step on the `apply --record` run: the steady hook-free steps with the fixes, which no
    # timing-check call and no annotated step is part of (the program's clock holds both, in a short run).
    after_step = (after or {}).get("measured", {}).get("step_time_ns") if (after or {}).get("per_step") else None
    if predicted.get("step_time_ns") and after_step:
        out["step_recorded_ms"] = round(per_clock * after_step / 1e6, 3)
        out["step_error_recorded"] = ratio(predicted["step_time_ns"], after_step)
    peak_after = (after or {}).get("measured", {}).get("peak_memory_bytes")
    if predicted.get("peak_memory_bytes") and peak_after:
        out["peak_predicted_mib"] = round(predicted["peak_memory_bytes"] / 2**20, 1)
        out["peak_measured_mib"] = round(peak_after / 2**20, 1)
        out["peak_error"] = ratio(predicted["peak_memory_bytes"], peak_after)
    return out


def steps_per_clock_step(case):
    """How many of the advisor's steps one step of the program's clock holds (the truth's
    advisor_steps_per_clock_step: a generate call times 32 forwards, each of them the advisor's step); 1 else."""
    return case.get("truth", {}).get("advisor_steps_per_clock_step", 1)


def plain_steps(case):
    """The program's own step in each of its plain runs (a short program ran more than once, run_corpus.py)."""
    runs = [case["runs"].get("plain", {})] + case.get("plain_more", [])
    return [r["ms_step"] for r in runs if r.get("ms_step")]


def exit_code_with_plan(case):
    """The program's exit code with the plan, as apply said it: the run's time limit (run_corpus.RUN_TIMEOUT_S)
    can stop apply in its fix-by-fix search, after the program ended; else the apply run's own."""
    said = next((line for line in case.get("apply_results", []) if line.startswith("exit code")), "")
    code = re.match(r"exit code (-?\d+)", said)
    return int(code.group(1)) if code else case["runs"].get("apply", {}).get("rc")


def judge_apply(case, plan, advice, after):
    """What apply did with each fix, whether the fixes it called applied took hold, and any harm."""
    runs = case["runs"]
    notes = case.get("apply_notes", [])
    fixes = {f.get("id"): f for f in (plan or {}).get("fixes", [])}
    gains = {f["id"]: f.get("estimated_gain", {}).get("time_ns", 0) for f in (advice or {}).get("findings", [])}
    after_gains = {f["id"]: f.get("estimated_gain", {}).get("time_ns", 0) for f in (after or {}).get("findings", [])}
    rolled = [n["id"] for n in notes if n["note"].startswith("rolled back")]
    applied, held = [], []
    for n in notes:
        if not n["note"].startswith("applied") or n["id"] in rolled:  # a fix rolled back did not hold
            continue
        finding = fixes.get(n["id"], {}).get("finding", "")
        gone = finding not in after_gains or after_gains[finding] <= 0.5 * gains.get(finding, 0)
        applied.append(n["id"])
        if gone and after is not None:
            held.append(n["id"])
    plain, apply = runs.get("plain", {}), runs.get("apply", {})
    harm = []
    exit_code = exit_code_with_plan(case)
    if apply and exit_code != plain.get("rc"):
        harm.append(f"exit code {plain.get('rc')} → {exit_code}")
    plains = plain_steps(case)
    # A plan that says it costs time (a memory plan's checkpointing) harms only past what it said.
    said_ms = (plan or {}).get("predicted", {}).get("step_time_ns", 0) / 1e6
    costs = said_ms > (plan or {}).get("measured", {}).get("step_time_ns", 0) / 1e6  # slower than it recorded
    allowed_ms = said_ms * 1.15 if costs else 0
    if apply.get("ms_step") and plains and apply["ms_step"] > max(max(plains) * 1.05, allowed_ms):
        spread = f" (slowest of {len(plains)} plain runs)" if len(plains) > 1 else ""
        also = f", beyond the {said_ms:.3f} ms/step its plan predicted" if costs else ""
        harm.append(f"slower: {max(plains):.3f}{spread} → {apply['ms_step']:.3f} ms/step{also}")
    said = case.get("apply_results", [])
    results = next((line for line in said if line.startswith("results")), "")
    verdict = ("verified" if results.startswith("results as the run as written") else
               "differ" if results.startswith("results differ") else "not compared" if results else "–")
    if verdict == "differ":  # kept, or rolled back after the steps under the fix had changed them
        harm.append(results)
    outcome = "rolled_back" if rolled else "applied" if applied else "none"
    ran = "apply" in runs or ("plain" in runs and not case.get("plan_fixes") and "plan_fixes" in case)
    return {"ran": ran, "applied": applied, "took_hold": held, "rolled_back": rolled, "harm": harm, "outcome": outcome,
            "expected": case["truth"].get("apply", "none"), "also_right": case["truth"].get("apply_allowed", []),
            "results": verdict}


def load_case(case_dir):
    """A case's results: the findings phase's and the apply phase's merged (result.json: both, older runs)."""
    case = None
    for part in ("result.json", "result.findings.json", "result.plain.json", "result.apply.json"):
        data = load(case_dir / part)
        if data is None:
            continue
        if case is None:
            case = data
        else:
            runs = {**case.get("runs", {}), **data.get("runs", {})}
            case.update(data)
            case["runs"] = runs
    return case


def fix_set(plan):
    """What a plan changes: its fixes' kinds and settings, each once (the PyTorch bridge runs one torch.compile for
    every fusion, padding and graph fix)."""
    return sorted({(f.get("kind", ""), str(f.get("setting", ""))) for f in (plan or {}).get("fixes", [])})


def plan_scored(case_dir):
    """The plan `apply` ran. Where the advisor as it is now (program.plan.json after --rescore) plans the same
    fixes, its prediction is the one scored: the measured run is of those very fixes."""
    now = load(case_dir / "program.apply.plan.json") or load(case_dir / "program.plan.json")  # apply_goal's first
    applied = load(case_dir / "applied.plan.json")
    if applied and now and fix_set(applied) == fix_set(now):
        return {**applied, "predicted": now.get("predicted", applied.get("predicted"))}
    return applied or now


def judge(folder, case_dir):
    case = load_case(case_dir)
    if case is None or "truth" not in case:
        return None
    # The truth is the corpus's as it is now (a run keeps the copy it was made with).
    current = load(run_corpus.CORPUS / case["case"] / "truth.json")
    truth = case["truth"] = current or case["truth"]
    advice = load(case_dir / "program.advice.json")
    clean = load(case_dir / "clean.advice.json")
    after = load(case_dir / "after.advice.json")
    plan = plan_scored(case_dir)
    fired, fired_clean = findings(advice), findings(clean)
    planted = truth.get("planted", [])
    allowed = set(planted) | set(truth.get("allowed", []))
    runs = case["runs"]
    j = {
        "case": case["case"], "split": truth.get("split", "fit"), "framework": truth.get("framework"),
        "ran": advice is not None, "planted": planted,
        "found": [i for i in planted if i in fired], "missed": [i for i in planted if i not in fired],
        "wrong": [i for i in fired if i not in allowed],
        "clean_ran": clean is not None,
        "clean_wrong": [i for i in fired_clean if i not in set(truth.get("clean_allowed", []))],
        "over_100": over_100(advice) + over_100(clean) + over_100(after),
        "runs": {k: {"rc": v.get("rc"), "ms_step": v.get("ms_step")} for k, v in runs.items()},
    }
    if advice:
        per_clock = steps_per_clock_step(case)
        j["advisor_step_ms"] = (per_clock * advice["measured"]["step_time_ns"] / 1e6 if advice.get("per_step")
                                else None)
        j["step_basis"] = advice.get("step_basis", "")
        clock = runs.get("record", {}).get("ms_step")
        j["step_vs_clock"] = ratio(j["advisor_step_ms"], clock)
        j["notes"] = advice.get("notes", [])
    j["recording_cost"] = ratio(runs.get("record", {}).get("ms_step"), runs.get("plain", {}).get("ms_step"))
    j["prediction"] = judge_prediction(case, plan, after) if case.get("apply_notes") else {}
    j["apply"] = judge_apply(case, plan, advice, after)
    if "error" in case:
        j["error"] = case["error"]
    return j


def share(part, whole):
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "–"


def summary(rows):
    planted = sum(len(r["planted"]) for r in rows)
    found = sum(len(r["found"]) for r in rows)
    clean_rows = [r for r in rows if r["clean_ran"]]
    preds = [r["prediction"] for r in rows if r["prediction"].get("step_error") is not None and r["apply"]["applied"]]
    peaks = [r["prediction"] for r in rows if r["prediction"].get("peak_error") is not None and r["apply"]["applied"]]
    recorded = [p for p in preds if p.get("step_error_recorded") is not None]
    steps = [r for r in rows if r.get("step_vs_clock") is not None]
    applied = sum(len(r["apply"]["applied"]) for r in rows)
    applied_rows = [r for r in rows if r["apply"]["ran"]]
    held = sum(len(r["apply"]["took_hold"]) for r in rows)
    return {
        "cases": len(rows),
        "planted_found": share(found, planted),
        "wrong_on_programs": sum(len(r["wrong"]) for r in rows),
        "wrong_on_clean_twins": f"{sum(len(r['clean_wrong']) for r in clean_rows)} in {len(clean_rows)} twins",
        "step_predictions_within_15": share(sum(abs(p["step_error"]) <= 0.15 for p in preds), len(preds)),
        "step_predictions_within_15_of_the_re-recorded_step": share(
            sum(abs(p["step_error_recorded"]) <= 0.15 for p in recorded), len(recorded)),
        "peak_predictions_within_15": share(sum(abs(p["peak_error"]) <= 0.15 for p in peaks), len(peaks)),
        "wrong_direction": sum(p.get("wrong_direction", False) for p in preds),
        "shares_over_100": sum(len(r["over_100"]) for r in rows),
        "applied_that_took_hold": share(held, applied),
        "apply_outcome_as_expected": share(sum(r["apply"]["outcome"] in [r["apply"]["expected"],
                                                                        *r["apply"].get("also_right", [])]
                                               for r in applied_rows),
                                           len(applied_rows)),
        "harmed": sum(bool(r["apply"]["harm"]) for r in rows),
        # Of the runs that kept a fix and compared the results (apply verifies since 2026-11-26).
        "results_verified": share(sum(r["apply"].get("results") == "verified" and bool(r["apply"]["applied"])
                                      for r in applied_rows),
                                  sum(r["apply"].get("results", "–") != "–" and bool(r["apply"]["applied"])
                                      for r in applied_rows)),
        "step_within_10_of_clock": share(sum(abs(r["step_vs_clock"]) <= 0.10 for r in steps), len(steps)),
    }


def pct(x):
    return "–" if x is None else f"{x * 100:+.0f} %"


def ms(x):
    return "–" if x is None else f"{x:.3f}"


def markdown(rows, machines, sources):
    lines = ["# The advisor's scorecard", "",
             "Generated by `scripts/advisor-eval score` from the corpus runs (bench/corpus/, "
             "bench/eval/scorecard.py says what each column counts).", ""]
    for m in machines:
        lines.append(f"- run {m.get('date', '?')}: {', '.join(m.get('gpus', []))}; PyTorch {m.get('torch', '?')}")
    lines += ["", "## Targets", "",
              "| measure | target | all | fit | holdout |", "|---|---|---|---|---|"]
    parts = {"all": rows, "fit": [r for r in rows if r["split"] == "fit"],
             "holdout": [r for r in rows if r["split"] == "holdout"]}
    sums = {k: summary(v) for k, v in parts.items()}
    targets = [("cases", "≥ 24"), ("planted_found", "≥ 95 %"), ("wrong_on_programs", "0"),
               ("wrong_on_clean_twins", "0"), ("step_predictions_within_15", "≥ 90 %"),
               ("step_predictions_within_15_of_the_re-recorded_step", "≥ 90 %"),
               ("peak_predictions_within_15", "≥ 90 %"), ("wrong_direction", "0"), ("shares_over_100", "0"),
               ("applied_that_took_hold", "100 %"), ("apply_outcome_as_expected", "100 %"), ("harmed", "0"),
               ("results_verified", "100 %"), ("step_within_10_of_clock", "100 %")]
    for key, target in targets:
        lines.append(f"| {key.replace('_', ' ')} | {target} | {sums['all'][key]} | {sums['fit'][key]} | "
                     f"{sums['holdout'][key]} |")
    lines += ["", "## Cases", "",
              "Steps are the program's own clock in ms/step. *advisor* is the advisor's step on the recorded run "
              "against the clock in that run; *predicted* the plan's step against the clock under `apply`; "
              "*re-recorded* the advisor's step on the `apply --record` run (its steady hook-free steps) and the "
              "prediction against it.", "",
              "| case | split | planted found | missed | wrong | wrong on twin | plain → recorded | advisor step | "
              "predicted → measured | re-recorded | peak predicted → measured | apply (expected) | took hold | "
              "results | harm |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        runs, p, a = r["runs"], r["prediction"], r["apply"]
        step = (f"{ms(r.get('advisor_step_ms'))} ({pct(r.get('step_vs_clock'))})" if r.get("ran") else "not run")
        expected = " or ".join([a["expected"], *a.get("also_right", [])])
        outcome = f"{a['outcome']} ({expected})" if a["ran"] else f"not run ({expected})"
        pred = (f"{ms(p['step_predicted_ms'])} → {ms(p['step_measured_ms'])} ({pct(p['step_error'])})"
                if "step_error" in p else "–")
        again = (f"{ms(p['step_recorded_ms'])} ({pct(p['step_error_recorded'])})" if "step_recorded_ms" in p else "–")
        peak = (f"{p['peak_predicted_mib']} → {p['peak_measured_mib']} MiB ({pct(p['peak_error'])})"
                if "peak_error" in p else "–")
        lines.append(
            f"| {r['case']} | {r['split']} | {', '.join(r['found']) or '–'} | {', '.join(r['missed']) or '–'} | "
            f"{', '.join(r['wrong']) or '–'} | {', '.join(r['clean_wrong']) or '–'} | "
            f"{ms(runs.get('plain', {}).get('ms_step'))} → {ms(runs.get('record', {}).get('ms_step'))} | {step} | "
            f"{pred} | {again} | {peak} | {outcome} | {len(a['took_hold'])}/{len(a['applied'])} | "
            f"{a.get('results', '–')} | "
            f"{'; '.join(a['harm']) or '–'} |")
    issues = [(r["case"], x) for r in rows for x in r["over_100"]]
    if issues:
        lines += ["", "## Shares above 100 %", ""] + [f"- {c}: {x}" for c, x in issues]
    failed = [r for r in rows if any(v.get("rc") not in (0, None) for v in r["runs"].values()) or r.get("error")]
    if failed:
        lines += ["", "## Runs that did not exit 0", ""]
        for r in failed:
            bad = {k: v["rc"] for k, v in r["runs"].items() if v.get("rc") not in (0, None)}
            lines.append(f"- {r['case']}: {bad or r.get('error')}")
    return "\n".join(lines) + "\n", sums


def main():
    parser = argparse.ArgumentParser(description="the advisor's scorecard")
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("-o", "--output", default="docs/advisor-scorecard")
    parser.add_argument("--rescore", metavar="GPUSCOPE")
    parser.add_argument("--gaps", metavar="FILE",
                        help="write each case's misses and wrong findings as they are now (bench/corpus/known_gaps.json, "
                             "which the CPU test on the committed traces holds the advisor to)")
    args = parser.parse_args()
    rows, machines = [], []
    for folder in args.results:
        if args.rescore:
            rescore(args.rescore, folder)
        machines.append(load(folder / "machine.json") or {})
        for case_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            row = judge(folder, case_dir)
            if row:
                rows.append(row)
    text, sums = markdown(rows, machines, [str(f) for f in args.results])
    if args.gaps:
        gaps = {r["case"]: {k: r[k] for k in ("missed", "wrong", "clean_wrong") if r[k]} for r in rows}
        Path(args.gaps).write_text(json.dumps({c: g for c, g in sorted(gaps.items()) if g}, indent=1) + "\n")
    Path(args.output + ".md").write_text(text)
    Path(args.output + ".json").write_text(json.dumps({"machines": machines, "summary": sums, "cases": rows},
                                                      indent=1, ensure_ascii=False))
    print(text)


if __name__ == "__main__":
    main()
