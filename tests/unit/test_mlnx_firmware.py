"""Firmware rollout decisions, driven by a recorded-format flint replay."""

import hashlib

import pytest
from cxfab.host.mlnx.firmware import FirmwareError, FirmwareRequest, Toolset, roll_out
from cxfab.host.mlnx.tools import flint_burn
from cxfab.host.mlnx.versions import compare_versions

DEVICE = "0000:65:00.0"
CARD_PSID = "LNV2190110032"


def flint_text(flash, psid, running=None):
    lines = ["Image type:            FS3", f"FW Version:            {flash}"]
    if running:
        lines.append(f"FW Version(Running):   {running}")
    lines += ["Product Version:       " + flash, f"PSID:                  {psid}"]
    return "\n".join(lines) + "\n"


class FakeFlint:
    """mstflint: `-d q`, `-i q`, `-d -i [-allow_psid_change] -y burn` with a PSID check."""

    def __init__(self, images):
        self.flash, self.running, self.psid = "12.23.1020", "12.23.1020", CARD_PSID
        self.images = images  # path -> (psid, version)
        self.calls = []

    @property
    def burns(self):
        return [c for c in self.calls if c[-1] == "burn"]

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[0] == "mstfwreset":
            return 0, "Reset-levels: ...\n", ""
        if argv[1:2] == ["-i"] and argv[-1] == "q":
            psid, version = self.images[argv[2]]
            return 0, flint_text(version, psid), ""
        if argv[-1] == "q":
            running = self.running if self.running != self.flash else None
            return 0, flint_text(self.flash, self.psid, running), ""
        if argv[-1] == "burn":
            psid, version = self.images[argv[4]]
            if psid != self.psid and "-allow_psid_change" not in argv:
                return 1, "", "-E- PSID mismatch. The PSID on flash differs from the image.\n"
            self.flash, self.psid = version, psid
            return 0, "Burning FS3 FW image without signatures - OK\n", ""
        raise AssertionError(argv)


@pytest.fixture
def images(tmp_path):
    good = tmp_path / "fw-12.28.1002.bin"
    good.write_bytes(b"good image")
    oem = tmp_path / "fw-mt.bin"
    oem.write_bytes(b"vendor image")
    return {
        "good": (str(good), hashlib.sha256(b"good image").hexdigest()),
        "vendor": (str(oem), hashlib.sha256(b"vendor image").hexdigest()),
        "table": {
            str(good): (CARD_PSID, "12.28.1002"),
            str(oem): ("MT_2190110032", "12.28.1002"),
        },
    }


def sha256_of(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


TOOLS = Toolset(flint="mstflint", fwmanager=None, query_with="flint", fwreset="mstfwreset")


def request(image, digest, **extra):
    return FirmwareRequest(
        device=DEVICE, version="12.28.1002", image=image, sha256=digest, psid=CARD_PSID, **extra
    )


def test_burn_then_pending_then_idempotent(images):
    fake = FakeFlint(images["table"])
    path, digest = images["good"]
    result = roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=False)
    assert result["changed"] and result["burned"]
    assert fake.burns == [flint_burn("mstflint", DEVICE, path, allow_psid_change=False)]
    assert result["flash_version"] == "12.28.1002"
    assert result["running_version"] == "12.23.1020"
    assert result["pending_activation"]
    assert result["activation"]["fwreset_supported"]
    assert "flash_version: 12.23.1020" in result["diff"]["before"]
    assert "flash_version: 12.28.1002" in result["diff"]["after"]
    # Re-run before activation: detected as pending, never burned twice.
    again = roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=False)
    assert not again["changed"] and again["pending_activation"] and len(fake.burns) == 1
    # After activation: nothing at all.
    fake.running = fake.flash
    done = roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=False)
    assert not done["changed"] and not done["pending_activation"]
    assert done["activation"] is None and len(fake.burns) == 1


def test_check_mode_reports_and_burns_nothing(images):
    fake = FakeFlint(images["table"])
    path, digest = images["good"]
    result = roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=True)
    assert result["changed"] and result["would_burn"] and not result["burned"]
    assert "would burn LNV2190110032 12.28.1002 over LNV2190110032 12.23.1020" in result["msg"]
    assert fake.burns == [] and fake.flash == "12.23.1020"


def test_check_mode_image_not_on_host_yet(images, tmp_path):
    fake = FakeFlint(images["table"])
    result = roll_out(
        request(str(tmp_path / "absent.bin"), "a" * 64), fake, TOOLS, sha256_of, check_mode=True
    )
    assert result["would_burn"] and "not on the host yet" in result["msg"]


def test_wrong_psid_image_refused(images):
    fake = FakeFlint(images["table"])
    path, digest = images["vendor"]
    req = FirmwareRequest(device=DEVICE, version="12.28.1002", image=path, sha256=digest)
    with pytest.raises(FirmwareError, match=r"card is LNV2190110032, the image .* MT_2190110032"):
        roll_out(req, fake, TOOLS, sha256_of, check_mode=False)
    assert fake.burns == []


def test_inventory_psid_differs_from_image(images):
    fake = FakeFlint(images["table"])
    path, digest = images["vendor"]
    with pytest.raises(FirmwareError, match="built for MT_2190110032, the inventory expects"):
        roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=False)
    assert fake.burns == []


def test_crossflash_only_with_opt_in(images):
    fake = FakeFlint(images["table"])
    path, digest = images["vendor"]
    req = FirmwareRequest(
        device=DEVICE,
        version="12.28.1002",
        image=path,
        sha256=digest,
        psid="MT_2190110032",
        allow_psid_change=True,
    )
    result = roll_out(req, fake, TOOLS, sha256_of, check_mode=False)
    assert "-allow_psid_change" in fake.burns[0]
    assert result["psid"] == "MT_2190110032" and "crossflash" in result["msg"]


def test_card_psid_differs_from_inventory(images):
    fake = FakeFlint(images["table"])
    fake.psid = "HP_2420110034"
    path, digest = images["good"]
    with pytest.raises(FirmwareError, match="card reports HP_2420110034"):
        roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=False)
    assert fake.burns == []


def test_sha256_mismatch_refused(images):
    fake = FakeFlint(images["table"])
    path, _digest = images["good"]
    with pytest.raises(FirmwareError, match="sha256 mismatch"):
        roll_out(request(path, "0" * 64), fake, TOOLS, sha256_of, check_mode=False)
    assert fake.burns == [] and not any(c[1] == "-i" for c in fake.calls)


def test_image_version_differs(images):
    fake = FakeFlint(images["table"])
    path, digest = images["good"]
    req = FirmwareRequest(
        device=DEVICE, version="12.27.1016", image=path, sha256=digest, psid=CARD_PSID
    )
    with pytest.raises(FirmwareError, match=r"contains 12\.28\.1002, the inventory expects 12\.27"):
        roll_out(req, fake, TOOLS, sha256_of, check_mode=False)
    assert fake.burns == []


def test_numeric_compare_no_burn_for_zero_padded(images):
    fake = FakeFlint(images["table"])
    fake.flash = fake.running = "12.28.1002"
    path, digest = images["good"]
    req = FirmwareRequest(device=DEVICE, version="12.028.1002", image=path, sha256=digest)
    assert not roll_out(req, fake, TOOLS, sha256_of, check_mode=False)["changed"]


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [("version", "latest", "version: not a firmware"), ("sha256", "abc", "not a sha256")],
)
def test_bad_request(images, field, value, match):
    path, digest = images["good"]
    values = {"version": "12.28.1002", "sha256": digest} | {field: value}
    req = FirmwareRequest(device=DEVICE, image=path, **values)
    with pytest.raises(FirmwareError, match=match):
        roll_out(req, FakeFlint(images["table"]), TOOLS, sha256_of, check_mode=False)


def test_query_through_mlxfwmanager(images):
    xml = (
        '<Devices><Device pciName="0000:65:00.0" type="ConnectX4" psid="LNV2190110032">'
        '<Versions><FW current="12.23.1020" available="N/A"/></Versions>'
        "<Status>No matching image found</Status></Device></Devices>"
    )

    def runner(argv):
        assert argv[:4] == ["mlxfwmanager", "-d", DEVICE, "--query"]
        return 0, xml, ""

    tools = Toolset(flint=None, fwmanager="mlxfwmanager", query_with="fwmanager")
    req = FirmwareRequest(device=DEVICE, query_only=True)
    result = roll_out(req, runner, tools, sha256_of, check_mode=False)
    assert result["flash_version"] == "12.23.1020" and result["psid"] == CARD_PSID


def test_burn_through_mlxfwmanager_keeps_pending(images):
    # A manager that shows only the flash version after the burn: still pending.
    path, digest = images["good"]
    state = {"flash": "12.23.1020"}
    calls = []

    def runner(argv):
        calls.append(argv)
        if argv[0] == "mstfwreset":
            return 0, "", ""
        if "-u" in argv:
            state["flash"] = "12.28.1002"
            return 0, "Restart needed for updates to take effect.\n", ""
        available = "12.28.1002" if "-i" in argv else "N/A"
        return (
            0,
            f"Device #1:\n  PSID:             {CARD_PSID}\n  PCI Device Name:  {DEVICE}\n"
            f"  Versions:         Current        Available\n"
            f"     FW             {state['flash']}     {available}\n",
            "",
        )

    tools = Toolset(
        flint=None, fwmanager="mlxfwmanager", query_with="fwmanager", fwreset="mstfwreset"
    )
    result = roll_out(request(path, digest), runner, tools, sha256_of, check_mode=False)
    assert result["burned"] and result["pending_activation"]
    assert result["running_version"] == "12.23.1020"
    assert ["mlxfwmanager", "-d", DEVICE, "-i", path, "-u", "-y"] in calls


@pytest.fixture
def older(tmp_path):
    """An image of an older version than the card's flash."""
    path = tmp_path / "fw-12.20.1010.bin"
    path.write_bytes(b"old image")
    return str(path), hashlib.sha256(b"old image").hexdigest()


def older_request(path, digest, **extra):
    return FirmwareRequest(
        device=DEVICE, version="12.20.1010", image=path, sha256=digest, psid=CARD_PSID, **extra
    )


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_downgrade_is_refused_through_flint(images, older, check_mode):
    fake = FakeFlint({**images["table"], older[0]: (CARD_PSID, "12.20.1010")})
    with pytest.raises(FirmwareError, match=r"downgrade refused .* holds 12\.23\.1020"):
        roll_out(older_request(*older), fake, TOOLS, sha256_of, check_mode=check_mode)
    assert fake.burns == [] and fake.flash == "12.23.1020"


def test_a_downgrade_is_refused_through_mlxfwmanager(older):
    calls = []

    def runner(argv):
        calls.append(argv)
        available = "12.20.1010" if "-i" in argv else "N/A"
        return (
            0,
            f"Device #1:\n  PSID:             {CARD_PSID}\n  PCI Device Name:  {DEVICE}\n"
            f"  Versions:         Current        Available\n"
            f"     FW             12.23.1020     {available}\n",
            "",
        )

    tools = Toolset(flint=None, fwmanager="mlxfwmanager", query_with="fwmanager")
    with pytest.raises(FirmwareError, match="downgrade refused"):
        roll_out(older_request(*older), runner, tools, sha256_of, check_mode=False)
    assert not [argv for argv in calls if "-u" in argv]


def test_a_downgrade_burns_with_the_opt_in(images, older):
    fake = FakeFlint({**images["table"], older[0]: (CARD_PSID, "12.20.1010")})
    req = older_request(*older, allow_downgrade=True)
    result = roll_out(req, fake, TOOLS, sha256_of, check_mode=False)
    assert result["burned"] and fake.flash == "12.20.1010"


class FakeFwManager:
    """mlxfwmanager as MFT's source has it: `-u` burns only a newer image; an older one
    is `Up to date` with exit status 0 unless `-f` forces it (`--query` reads the card)."""

    def __init__(self, images, honours_force=True):
        self.flash = "12.23.1020"
        self.images = images  # path -> version
        self.honours_force = honours_force
        self.calls = []

    def __call__(self, argv):
        self.calls.append(argv)
        image = argv[argv.index("-i") + 1] if "-i" in argv else None
        available = self.images[image] if image else "N/A"
        if "-u" in argv:
            newer = compare_versions(available, self.flash) > 0
            if newer or ("-f" in argv and self.honours_force):
                self.flash = available
                return (
                    0,
                    "Updating FW ...     Done\n\nRestart needed for updates to take effect.\n",
                    "",
                )
            return 0, "---------\nAll listed device(s) firmware images are up to date.\n", ""
        return (
            0,
            f"Device #1:\n  PSID:             {CARD_PSID}\n  PCI Device Name:  {DEVICE}\n"
            f"  Versions:         Current        Available\n"
            f"     FW             {self.flash}     {available}\n",
            "",
        )


FWMANAGER_ONLY = Toolset(flint=None, fwmanager="mlxfwmanager", query_with="fwmanager")


def test_a_downgrade_through_mlxfwmanager_is_forced_with_the_opt_in(older):
    fake = FakeFwManager({older[0]: "12.20.1010"})
    req = older_request(*older, allow_downgrade=True)
    result = roll_out(req, fake, FWMANAGER_ONLY, sha256_of, check_mode=False)
    assert result["burned"] and fake.flash == "12.20.1010"
    assert ["mlxfwmanager", "-d", DEVICE, "-i", older[0], "-u", "-y", "-f"] in fake.calls


def test_an_upgrade_through_mlxfwmanager_is_not_forced(images):
    path, digest = images["good"]
    fake = FakeFwManager({path: "12.28.1002"})
    result = roll_out(request(path, digest), fake, FWMANAGER_ONLY, sha256_of, check_mode=False)
    assert result["burned"] and fake.flash == "12.28.1002"
    burns = [argv for argv in fake.calls if "-u" in argv]
    assert burns == [["mlxfwmanager", "-d", DEVICE, "-i", path, "-u", "-y"]]


def test_a_manager_that_leaves_the_flash_alone_fails_the_burn(older):
    # `Up to date` with exit status 0 is no burn: the read-back says what the flash holds.
    fake = FakeFwManager({older[0]: "12.20.1010"}, honours_force=False)
    req = older_request(*older, allow_downgrade=True)
    with pytest.raises(FirmwareError, match=r"flash holds 12\.23\.1020, not 12\.20\.1010"):
        roll_out(req, fake, FWMANAGER_ONLY, sha256_of, check_mode=False)


class HalfBurnFlint(FakeFlint):
    """A burn that dies half way: the flash is left holding `left`, or cannot be read."""

    def __init__(self, images, left):
        super().__init__(images)
        self.left = left

    def __call__(self, argv):
        if argv[-1] == "burn":
            self.calls.append(argv)
            if self.left is None:
                self.flash = None
            else:
                self.flash = self.left
            return 1, "Burning FS3 FW image ... 47%", "-E- Burning failed: write error\n"
        if argv[-1] == "q" and self.flash is None and argv[1] == "-d":
            self.calls.append(argv)
            return 1, "", "-E- Cannot open device: no FS3/FS4 image found\n"
        return super().__call__(argv)


@pytest.mark.parametrize(
    ("left", "says", "flash_after"),
    [
        ("12.23.1020", "the flash still holds 12.23.1020 (LNV2190110032): unchanged", "12.23.1020"),
        (
            "12.28.1002",
            "the flash now holds 12.28.1002 (LNV2190110032), it held 12.23.1020",
            "12.28.1002",
        ),
        (None, "the flash could not be read back", None),
    ],
    ids=["unchanged", "changed", "unreadable"],
)
def test_a_failed_burn_reads_the_flash_again_and_says_what_it_holds(
    images, left, says, flash_after
):
    fake = HalfBurnFlint(images["table"], left)
    path, digest = images["good"]
    with pytest.raises(FirmwareError) as raised:
        roll_out(request(path, digest), fake, TOOLS, sha256_of, check_mode=False)
    message = str(raised.value)
    assert "Burning failed: write error" in message
    assert says in message
    assert raised.value.state["flash_version"] == flash_after
    # the query after the burn really happened
    assert fake.calls[-1][-1] == "q" and fake.calls[-2][-1] == "burn"
