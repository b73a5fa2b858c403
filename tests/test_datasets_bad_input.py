"""Bad input: one clear error naming the file, the record and the field; from the CLI, exit 2 and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdial import datasets
from ragdial.cli import main
from ragdial.errors import DataFormatError

SRC = Path(__file__).resolve().parents[1] / "src"


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def run_cli(capsys, *args: str) -> tuple[int, str]:
    """Run ``ragdial ARGS`` in-process; an uncaught exception (a traceback) fails the test."""
    argv = sys.argv
    sys.argv = ["ragdial", *args]
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        sys.argv = argv
    return code, capsys.readouterr().err


def dstc_root(tmp_path: Path, logs, labels) -> Path:
    knowledge = {"hotel": {"1": {"name": "Inn", "faqs": {"0": {"question": "Pets?", "answer": "No."}}}}}
    write_json(tmp_path / "knowledge.json", knowledge)
    write_json(tmp_path / "val" / "logs.json", logs)
    write_json(tmp_path / "val" / "labels.json", labels)
    return tmp_path


LOG = [{"speaker": "U", "text": "Can I bring my dog?"}]
GOOD_LABEL = {"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_type": "faq", "doc_id": 0}]}


def case_missing_file(tmp_path: Path):
    path = tmp_path / "absent.json"
    return ("kdconv", path), str(path), None, None, "file not found"


def case_malformed_json(tmp_path: Path):
    path = tmp_path / "bad.json"
    path.write_text('[{"messages": [', encoding="utf-8")
    return ("huawei", path), str(path), None, None, "malformed JSON at line 1"


def case_missing_field(tmp_path: Path):
    path = write_json(tmp_path / "dev.json", [{"messages": [{"message": "hi"}, {"attrs": []}]}])
    return ("kdconv", path), str(path), "0, message 1", "message", "required field is missing"


def case_wrong_encoding(tmp_path: Path):
    path = tmp_path / "gbk.json"
    path.write_bytes(json.dumps([{"messages": [{"message": "你好"}]}], ensure_ascii=False).encode("gbk"))
    return ("kdconv", path), str(path), None, None, "not UTF-8"


def case_lengths_differ(tmp_path: Path):
    root = dstc_root(tmp_path, [LOG, LOG], [GOOD_LABEL])
    return ("dstc11", root), str(root / "val" / "labels.json"), None, "length", "1 labels for 2 log instances"


def case_unknown_knowledge(tmp_path: Path):
    bad = {"target": True, "knowledge": [{"domain": "hotel", "entity_id": 7, "doc_type": "faq", "doc_id": 0}]}
    root = dstc_root(tmp_path, [LOG, LOG], [GOOD_LABEL, bad])
    return ("dstc11", root), str(root / "val" / "labels.json"), "1, knowledge 0", "knowledge", "unknown knowledge"


def case_empty_dialog(tmp_path: Path):
    path = write_json(tmp_path / "dev.json", [{"messages": [{"message": "hi"}]}, {"messages": []}])
    return ("kdconv", path), str(path), 1, "messages", "empty dialog"


def case_empty_mobilecs2_dialog(tmp_path: Path):
    for name, data in (("global_kb.json", []), ("qa.json", {})):
        write_json(tmp_path / name, data)
    path = write_json(tmp_path / "test.json", {"d9": {"log": [], "local_kb": []}})
    return ("mobilecs2", path), str(path), "d9", "log", "empty dialog"


CASES = [
    case_missing_file,
    case_malformed_json,
    case_missing_field,
    case_wrong_encoding,
    case_lengths_differ,
    case_unknown_knowledge,
    case_empty_dialog,
    case_empty_mobilecs2_dialog,
]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[5:] for c in CASES])
def test_loader_error_names_file_record_field(tmp_path: Path, case) -> None:
    (fmt, path), file, record, field, message = case(tmp_path)
    with pytest.raises(DataFormatError, match=message) as err:
        datasets.load(fmt, path)
    assert (err.value.path, err.value.record, err.value.field) == (file, record, field)
    assert str(err.value).startswith(file)


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[5:] for c in CASES])
@pytest.mark.parametrize("command", ["stats", "validate"])
def test_cli_exits_2_with_one_line(tmp_path: Path, capsys, case, command: str) -> None:
    (fmt, path), file, _record, _field, message = case(tmp_path)
    code, err = run_cli(capsys, "data", command, fmt, str(path))
    assert code == 2
    assert err.startswith("error: " + file) and message in err
    assert len(err.strip().splitlines()) == 1


def test_cli_unknown_format(capsys, tmp_path: Path) -> None:
    code, err = run_cli(capsys, "data", "stats", "multiwoz", str(tmp_path))
    assert code == 2 and "unknown format 'multiwoz'" in err


def test_convert_leaves_nothing_behind_on_error(capsys, tmp_path: Path) -> None:
    (fmt, path), *_ = case_malformed_json(tmp_path)
    out = tmp_path / "out.jsonl"
    code, _ = run_cli(capsys, "data", "convert", fmt, str(path), str(out))
    assert code == 2 and not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.json"]


def test_python_m_ragdial_reports_without_traceback(tmp_path: Path) -> None:
    (fmt, path), file, *_ = case_wrong_encoding(tmp_path)
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "ragdial", "data", "validate", fmt, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.startswith(f"error: {file}")


def test_cli_loader_options(capsys, fixtures: Path, tmp_path: Path) -> None:
    source = fixtures / "mobilecs2" / "en"
    dialogs = tmp_path / "d.json"
    dialogs.write_bytes((source / "dev_final_processed.json").read_bytes())
    kb = ["-o", f"global_kb={source / 'global_kb.json'}", "-o", f"faq={source / 'qa.json'}"]
    code, err = run_cli(capsys, "data", "validate", "mobilecs2", str(dialogs), *kb)
    assert code == 0, err
    cases = (
        ("kb=x", "takes no option kb (accepted: global_kb, faq, language, rules, qa_dialogs)"),
        ("language", "KEY=VALUE"),
    )
    for bad, message in cases:
        code, err = run_cli(capsys, "data", "stats", "mobilecs2", str(dialogs), *kb, "-o", bad)
        assert code == 2 and message in err
    code, err = run_cli(capsys, "data", "stats", "mobilecs2", str(dialogs), *kb, "-o", "language=fr")
    assert code == 2 and err.strip() == "error: language must be one of zh, en, not 'fr'"


def test_dstc_unknown_split_is_named(tmp_path: Path) -> None:
    root = dstc_root(tmp_path, [LOG], [GOOD_LABEL])
    with pytest.raises(DataFormatError, match="no such split 'test'; splits here: val") as err:
        datasets.load("dstc11", root, "test")
    assert err.value.path == str(root / "test" / "logs.json")


def test_dstc_knowledge_with_a_non_numeric_doc_id(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "knowledge.json", {"hotel": {"1": {"name": "Inn", "faqs": {"x": {"question": "q", "answer": "a"}}}}}
    )
    with pytest.raises(DataFormatError, match="expected a numeric id, found 'x'") as err:
        datasets.load("dstc11", tmp_path)
    assert (err.value.path, err.value.record) == (str(path), "hotel/1/faqs/x")


def test_atomic_directory_replaces_whole_on_success_and_keeps_the_old_one_on_error(tmp_path):
    from ragdial.io import atomic_directory

    target = tmp_path / "index"
    target.mkdir()
    (target / "old.txt").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("half", encoding="utf-8")
        raise RuntimeError("stopped while writing")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
    assert sorted(p.name for p in target.iterdir()) == ["old.txt"]
    with atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("whole", encoding="utf-8")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
