"""The manual builds as a site with no stale page or link, and the README's links lead somewhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_page_is_in_the_nav() -> None:
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), flags=re.MULTILINE))
    pages = {page.name for page in DOCS.glob("*.md")}
    assert pages == nav


def test_readme_links_point_to_files() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [link.split("#", 1)[0] for link in re.findall(r"\]\(([^)\s]+)\)", readme)]
    relative = [target for target in targets if target and "://" not in target]
    assert relative
    for target in relative:
        assert (ROOT / target).exists(), target


def test_the_proofs_table_is_the_report() -> None:
    """docs/proofs.md's table of claims is what ``python -m bpeproof.proofs_tests.proofs.report`` prints."""
    from bpeproof.proofs_tests.proofs.obligations import PROOFS
    from bpeproof.proofs_tests.proofs.report import markdown_table

    page = (DOCS / "proofs.md").read_text(encoding="utf-8")
    shown = page.split("<!-- claims:begin -->\n", 1)[1].split("\n<!-- claims:end -->", 1)[0]
    assert shown.strip() == markdown_table(PROOFS), "regenerate: python -m bpeproof.proofs_tests.proofs.report"


def test_the_benchmark_tables_are_their_saved_results() -> None:
    """Every table between bench markers in docs/ is what its script prints for the results kept in bench/results
    (``python bench/docs_tables.py`` makes them again)."""
    pages = [page for page in DOCS.glob("*.md") if "<!-- bench: " in page.read_text(encoding="utf-8")]
    assert pages, "the manual quotes the benchmarks through bench markers"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "docs_tables.py"), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_folder_tree_names_every_folder_and_module() -> None:
    """The manual's folder tree (docs/index.md) names every folder of the package and every module in it, so that
    a new module cannot go undescribed."""
    page = (DOCS / "index.md").read_text(encoding="utf-8").split("## The folder tree", 1)[1]
    missing: list[str] = []
    for folder in ("spec", "impl", "proofs_tests", "audit", "bpeproof"):
        for path in sorted((ROOT / folder).rglob("*")):
            relative = path.relative_to(ROOT)
            if "__pycache__" in relative.parts or "tests" in relative.parts or "fixtures" in relative.parts:
                continue
            if path.is_dir() and not path.is_symlink() and f"`{relative}/" not in page:
                missing.append(f"{relative}/")
            elif path.suffix in (".py", ".c") and path.name not in ("__init__.py", "__main__.py", "conftest.py") \
                    and not path.name.startswith("_") and f"{path.name}`" not in page:
                missing.append(str(relative))
    assert not missing, f"docs/index.md's folder tree does not name: {missing}"
