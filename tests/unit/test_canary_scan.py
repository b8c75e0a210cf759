"""The password scan of the canary tests: found wherever it is written, and a file the
lab tier removes while the scan runs (make test runs both tiers side by side) is no
error."""

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
    gone.unlink()  # what a lab run's clean-up does between the listing and the read
    monkeypatch.setattr(canary, "_files_under", lambda directory: listed)
    assert canary.leaks(secret, [], [tmp_path]) == [str(kept)]
    # Removed between is_file() and the read: no bytes, no error.
    assert canary._contents(gone) == b""
