"""``ragdial generate train`` and ``batch`` on our fixture: a template model, then an official result.json."""

from __future__ import annotations

import json
import sys

import pytest

from ragdial.cli import main
from ragdial.datasets import kdconv


def run(monkeypatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["ragdial", *args])
    try:
        main()
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def test_train_then_batch_writes_a_valid_result_file(monkeypatch, tmp_path, fixtures, capsys):
    data = str(fixtures / "generation" / "travel_dialogs.json")
    model = tmp_path / "template.json"
    assert run(monkeypatch, "generate", "train", "huawei", data, "--out", str(model)) == 0
    assert json.loads(model.read_text(encoding="utf-8"))["attribute_patterns"]["门票"] == "{entity}的门票是{value}。"
    out = tmp_path / "result.json"
    assert run(monkeypatch, "generate", "batch", "huawei", data, "--template-model", str(model), "--out", str(out)) == 0
    result = kdconv.read_result(out)
    assert result["0:1"]["message"] == "青石湖公园的门票是免费。"
    assert result["0:1"]["attrs"] == [{"name": "青石湖公园", "attrname": "门票", "attrvalue": "免费"}]
    assert result["0:5"]["message"] == "不客气。" and "attrs" not in result["0:5"]
    assert "wrote" in capsys.readouterr().out


def test_missing_template_model_is_one_line_error(monkeypatch, tmp_path, fixtures, capsys):
    data = str(fixtures / "generation" / "travel_dialogs.json")
    missing = tmp_path / "none.json"
    code = run(monkeypatch, "generate", "batch", "huawei", data, "--template-model", str(missing), "--out", "x.json")
    assert code == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "Traceback" not in err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("backend", ["nonsense"])
def test_unknown_backend_is_named(monkeypatch, fixtures, capsys, backend, tmp_path):
    data = str(fixtures / "generation" / "travel_dialogs.json")
    code = run(
        monkeypatch, "generate", "batch", "huawei", data, "--backend", backend, "--out", str(tmp_path / "o.json")
    )
    assert code == 2 and "nonsense" in capsys.readouterr().err


class _Built(Exception):
    """Raised by the stand-in registry once the CLI has chosen the generator's options."""


@pytest.mark.parametrize(("extra", "expected"), [((), 0), (("--prompt-turns", "3"), 3)])
def test_batch_llama_shows_the_whole_dialog_unless_told(monkeypatch, tmp_path, fixtures, extra, expected):
    """Offline batch generation has no first-token target: the llama prompt keeps every dialog turn by default
    (the service's default keeps the last 3), and --prompt-turns sets it."""
    seen: dict[str, object] = {}

    def create(name: str, **options: object) -> None:
        seen.update(options, name=name)
        raise _Built

    monkeypatch.setattr("ragdial.cli.generate.create", create)
    data = str(fixtures / "generation" / "travel_dialogs.json")
    args = (
        "generate",
        "batch",
        "huawei",
        data,
        "--backend",
        "llama",
        "--model",
        "m.gguf",
        "--out",
        str(tmp_path / "o"),
    )
    with pytest.raises(_Built):
        run(monkeypatch, *args, *extra)
    assert seen == {"name": "llama", "model": "m.gguf", "prompt_turns": expected}
