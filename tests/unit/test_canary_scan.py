"""The password scan of the canary tests: found wherever it is written, and a file
another run from the same tree removes while the scan runs is no error."""

from __future__ import annotations

from tests.tools import canary


def test_a_password_in_a_nested_file_is_named(tmp_path):
    secret = canary.new_password()
    nested = tmp_path / "reports" / "2026" / "report.json"
    nested.parent.mkdir(parents=True)
    nested.write_text(f'{{"password": "{secret}"}}')
    (tmp_path / "reports" / "clean.txt").write_text("nothing here")
    assert canary.leaks(secret, [], [tmp_path / "reports"]) == [str(nested)]


def test_a_file_removed_after_the_listing_is_passed_over(tmp_path, monkeypatch):
    secret = canary.new_password()
    kept = tmp_path / "kept.log"
    kept.write_text(secret)
    gone = tmp_path / "gone.log"
    gone.write_text(secret)
    listed = canary._files_under(tmp_path)
    assert listed == [gone, kept]
    gone.unlink()  # another run's clean-up between the listing and the read
    monkeypatch.setattr(canary, "_files_under", lambda directory: listed)
    assert canary.leaks(secret, [], [tmp_path]) == [str(kept)]
    # Removed between is_file() and the read: no bytes, no error.
    assert canary._contents(gone) == b""
