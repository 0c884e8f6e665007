"""Plugin manifests: the nearest plugin, a case's own ``plugins:``, broken manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.model import Case, LoadError, PluginInfo
from pytest_plugin_evals.records import plugin_to_json
from pytest_plugin_evals.suites import directory, manifest
from tests.helpers import write_tree


def plugin(folder: Path, doc: object | None) -> Path:
    target = folder / ".claude-plugin" / "plugin.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return folder


def case_in(folder: Path, frontmatter: str = "") -> Case:
    case_dir = folder / "evals" / "group" / "c"
    (case_dir / "graders").mkdir(parents=True)
    head = f"---\n{frontmatter}---\n" if frontmatter else ""
    (case_dir / "prompt.md").write_text(head + "Hi\n", encoding="utf-8")
    (case_dir / "graders" / "g.md").write_text("---\ntype: regex\n---\nx\n", encoding="utf-8")
    return directory.load_case(case_dir, folder / "evals")


def test_find_plugin_walks_up(tmp_path: Path) -> None:
    root = plugin(tmp_path / "release-kit", {"name": "rel", "version": "1.2.0"})
    deep = root / "evals" / "a" / "b"
    deep.mkdir(parents=True)
    found = manifest.find_plugin(deep)
    assert found == PluginInfo("rel", "1.2.0", root.resolve())
    assert plugin_to_json(found) == {"name": "rel", "version": "1.2.0", "path": str(root.resolve())}
    assert manifest.find_plugin(root) == found
    assert manifest.find_plugin(deep / "missing-file.md") == found


def test_nearest_manifest_wins(tmp_path: Path) -> None:
    outer = plugin(tmp_path / "outer", {"name": "outer"})
    inner = plugin(outer / "plugins" / "inner", {"name": "inner"})
    assert manifest.find_plugin(inner / "evals").name == "inner"  # type: ignore[union-attr]


def test_name_defaults_to_the_folder_and_version_is_optional(tmp_path: Path) -> None:
    root = plugin(tmp_path / "my-plugin", {"description": "no name"})
    found = manifest.find_plugin(root)
    assert found == PluginInfo("my-plugin", None, root.resolve())
    assert plugin_to_json(found) == {"name": "my-plugin", "path": str(root.resolve())}


def test_no_plugin(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    assert manifest.find_plugin(tmp_path / "evals") is None


def test_broken_manifest_is_a_load_error(tmp_path: Path) -> None:
    root = plugin(tmp_path / "p", '{\n  "name": "x",\n}')
    with pytest.raises(LoadError) as info:
        manifest.find_plugin(root)
    assert info.value.path == root.resolve() / ".claude-plugin" / "plugin.json"
    assert info.value.message.startswith("invalid plugin manifest: invalid JSON: ")
    assert info.value.line == 3
    plugin(root, "[1]")
    with pytest.raises(LoadError, match="must be a JSON object"):
        manifest.find_plugin(root)


def test_case_plugins_default_to_the_nearest(tmp_path: Path) -> None:
    root = plugin(tmp_path / "kit", {"name": "kit", "version": "0.1.0"})
    case = case_in(root)
    assert manifest.case_plugins(case) == [PluginInfo("kit", "0.1.0", root.resolve())]


def test_case_plugins_from_frontmatter(tmp_path: Path) -> None:
    root = tmp_path / "kit"
    plugin(root / "vendor" / "helper", {"name": "helper"})
    (root / "plain").mkdir(parents=True)
    case = case_in(root, 'plugins: ["../../../vendor/helper", "../../../plain"]\n')
    assert manifest.case_plugins(case) == [
        PluginInfo("helper", None, (root / "vendor" / "helper").resolve()),
        PluginInfo("plain", None, (root / "plain").resolve()),
    ]


def test_case_plugin_that_does_not_exist(tmp_path: Path) -> None:
    case = case_in(tmp_path / "kit", 'plugins: ["../nope"]\n')
    with pytest.raises(LoadError, match=r'plugins: "\.\./nope" is not a folder'):
        manifest.case_plugins(case)


def test_no_plugin_for_the_case(tmp_path: Path) -> None:
    assert manifest.case_plugins(case_in(tmp_path / "kit")) == []


def skill(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n", "utf-8")
    return folder


@pytest.mark.parametrize(
    ("where", "layout", "plugin_at"),
    [
        ("", "skill", ""),
        ("skills/pdf", "skills", ""),
        (".claude/skills/pdf", "claude-skills", ".claude"),
    ],
)
def test_a_bare_skill_layout_is_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, layout: str, plugin_at: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "pdf"
    skill(root / where)
    found = manifest.find_plugin(root / "evals")
    folder = (root / plugin_at).resolve()
    assert found == PluginInfo(folder.name, None, folder, layout)
    assert manifest.case_plugins(case_in(root))[0].layout == layout
    assert plugin_to_json(found)["layout"] == layout


def test_a_manifest_above_a_skill_wins(tmp_path: Path) -> None:
    # A plugin's skill that carries its own evals/ (as the math-olympiad plugin ships them).
    root = plugin(tmp_path / "kit", {"name": "kit"})
    inner = skill(root / "skills" / "olympiad")
    found = manifest.find_plugin(inner / "evals")
    assert found is not None and found.name == "kit" and found.layout == "manifest"


def test_bare_skills_are_looked_for_only_beside_the_evals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    skill(tmp_path / "far" / "skills" / "x")
    assert manifest.find_plugin(tmp_path / "far" / "a" / "b" / "evals") is None
    assert "no plugin found: no .claude-plugin/plugin.json at or above" in manifest.no_plugin_line(
        tmp_path / "far" / "a" / "b" / "evals"
    )


def test_the_home_folders_own_skills_are_not_a_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    skill(tmp_path / ".claude" / "skills" / "mine")
    assert manifest.find_plugin(tmp_path / "evals") is None


def test_a_layout_read_back_is_one_of_the_known() -> None:
    from pytest_plugin_evals.records import plugin_from_json

    assert plugin_from_json({"name": "p", "path": "/x", "layout": "skills"}).layout == "skills"  # type: ignore[union-attr]
    hostile = plugin_from_json({"name": "p", "path": "/x", "layout": "<b>x</b>"})
    assert hostile is not None and hostile.layout == "manifest"


# -- skill collections ---------------------------------------------------------------------------


def test_skill_folders_beside_an_evals_folder_are_a_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "text-tools"
    for name in ("slugify", "word-count", ".hidden", "evals"):
        skill(root / name)
    (root / "evals" / "c").mkdir()
    found = manifest.find_plugin(root / "evals")
    assert found == PluginInfo("text-tools", None, root.resolve(), "collection")
    assert plugin_to_json(found)["layout"] == "collection"
    assert [p.parent.name for p in manifest.collection_skills(root)] == ["slugify", "word-count"]
    # A skill of the collection, with evals of its own, runs with the whole collection.
    assert manifest.find_plugin(root / "word-count" / "evals") == found


def test_skill_folders_without_an_evals_folder_are_no_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder that merely holds skill folders (a temporary folder of many projects, say) is
    no collection: only one with an evals/ of its own is."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    skill(tmp_path / "a")
    skill(tmp_path / "b")
    assert manifest.collection(tmp_path) is None
    assert manifest.find_plugin(tmp_path / "a" / "evals") == PluginInfo(
        "a", None, (tmp_path / "a").resolve(), "skill"
    )
    plugin(tmp_path / "kit", {"name": "kit"})
    skill(tmp_path / "kit" / "x")
    (tmp_path / "kit" / "evals").mkdir()
    assert manifest.collection(tmp_path / "kit") is None  # a manifest makes it a plugin


def test_a_collection_is_staged_as_a_plugin_folder_every_agent_loads(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "skills-repo",
        {
            "slugify/SKILL.md": "---\nname: slugify\n---\nSlug.",
            "slugify/scripts/run.sh": "echo hi",
            "notes/README.md": "not a skill",
        },
    )
    (root / "slugify" / "link").symlink_to(root / "notes" / "README.md")
    plugin = PluginInfo("skills-repo", None, root, "collection")
    staged = manifest.stage_collection(plugin, tmp_path / "temp")
    assert staged == tmp_path / "temp" / "skills-repo"
    skill = staged / "skills" / "slugify"
    assert (skill / "SKILL.md").read_text() == "---\nname: slugify\n---\nSlug."
    assert (skill / "scripts" / "run.sh").read_text() == "echo hi"
    assert (skill / "link").is_symlink()  # copied as it is, never followed
    assert sorted(p.name for p in (staged / "skills").iterdir()) == ["slugify"]
    assert list(root.rglob("*")) and not (root / "skills").exists()  # the source is untouched
