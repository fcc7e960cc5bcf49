"""`sciqag review` driven in a real headless Chromium (Debian's chromium and chromium-driver) by Selenium:
keyboard scoring, an edit, a drop, a reload, two reviewers at once; everything found in reviews.jsonl."""

from __future__ import annotations

import os
import re
import shutil
import time

import pytest

from sciqag_dataset.core.schema import RACAR_DIMENSIONS
from sciqag_dataset.review.store import read_reviews, reviewed

CHROMIUM, DRIVER = (
    shutil.which("chromium") or "/usr/bin/chromium",
    shutil.which("chromedriver") or "/usr/bin/chromedriver",
)
pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)),
    reason="needs Debian's chromium and chromium-driver (README, Run the tests)",
)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


def browser(tmp_path, name: str):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1440,900",
        f"--user-data-dir={tmp_path / ('chrome-' + name)}",
    ):
        opts.add_argument(arg)
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager look for a driver online
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def wait_text(driver, element_id: str, pattern: str, timeout: float = 15) -> str:
    WebDriverWait(driver, timeout).until(
        lambda d: re.search(pattern, d.find_element(By.ID, element_id).text) is not None
    )
    return driver.find_element(By.ID, element_id).text


def keys(driver, *sequence) -> None:
    for k in sequence:
        ActionChains(driver).send_keys(k).perform()
        time.sleep(0.05)


def position(driver) -> int:
    return int(wait_text(driver, "position", r"^\d+ / \d+$").split("/")[0])


def go_next(driver) -> None:
    before = position(driver)
    keys(driver, Keys.ARROW_RIGHT)
    wait_text(driver, "position", rf"^{before + 1} / ")


def act(driver, *sequence) -> None:
    """Keys whose actions save, then wait until the page says they are saved (cleared first: no stale "Saved")."""
    driver.execute_script("document.getElementById('saved').textContent = ''")
    keys(driver, *sequence)
    wait_text(driver, "saved", r"^Saved ✓$")


def test_keyboard_review_edit_drop_reload_and_two_reviewers(served, tmp_path):
    work, url = served
    alice = browser(tmp_path, "alice")
    try:
        alice.get(url + "&reviewer=alice")
        assert wait_text(alice, "position", r"^1 / 20$")
        alice.save_screenshot(str(tmp_path / "01-first-pair.png"))
        for k in range(5):  # five pairs scored by keyboard and kept
            act(alice, *"32233", "y")
            if k == 0:
                alice.save_screenshot(str(tmp_path / "02-scored.png"))
            go_next(alice)
        # pair 6: the question edited in place
        edited_id = alice.find_element(By.ID, "pair-id").text
        keys(alice, "q")
        box = alice.find_element(By.ID, "question-box")
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys("What does the edited question ask?")
        alice.execute_script("document.getElementById('saved').textContent = ''")
        box.send_keys(Keys.ESCAPE)
        wait_text(alice, "saved", r"^Saved ✓$")
        assert alice.find_element(By.ID, "question").text == "What does the edited question ask?"
        alice.save_screenshot(str(tmp_path / "03-edited.png"))
        go_next(alice)
        dropped_id = alice.find_element(By.ID, "pair-id").text
        act(alice, "x")
        assert "on" in alice.find_element(By.ID, "drop").get_attribute("class")

        # a second reviewer at the same time, in another browser
        bob = browser(tmp_path, "bob")
        try:
            bob.get(url + "&reviewer=bob")
            wait_text(bob, "position", r"^1 / 20$")
            act(bob, *"11111", "x")
            bob_first = bob.find_element(By.ID, "pair-id").text
            go_next(bob)
            keys(alice, Keys.ARROW_LEFT)  # alice goes on while bob works
            wait_text(alice, "position", r"^6 / ")
            act(bob, *"222")
            bob.save_screenshot(str(tmp_path / "04-bob.png"))
        finally:
            bob.quit()

        alice.refresh()  # a reload comes back to the same pair, as it was left
        wait_text(alice, "position", r"^6 / 20$")
        assert alice.find_element(By.ID, "question").text == "What does the edited question ask?"
        assert wait_text(alice, "progress-text", r"of 20 reviewed").startswith("6 of 20")  # 5 scored + 1 dropped
        alice.save_screenshot(str(tmp_path / "05-after-reload.png"))
    finally:
        alice.quit()

    log = read_reviews(work / "reviews.jsonl")
    assert log.skipped == 0
    mine = {pid: s for (r, pid), s in log.states.items() if r == "alice"}
    scored = [s for s in mine.values() if all(d in s for d in RACAR_DIMENSIONS)]
    assert len(scored) == 5 and all(
        [s[d] for d in RACAR_DIMENSIONS] == [3, 2, 2, 3, 3] and s["keep"] is True for s in scored
    )
    assert mine[edited_id]["question"] == "What does the edited question ask?"
    assert mine[dropped_id]["keep"] is False and reviewed(mine[dropped_id])
    bobs = {pid: s for (r, pid), s in log.states.items() if r == "bob"}
    assert bobs[bob_first] == {**{d: 1 for d in RACAR_DIMENSIONS}, "keep": False, "time": bobs[bob_first]["time"]}
    assert sum(len(s) - 1 for s in bobs.values()) == 9  # 5 scores + drop, then 3 scores
    for png in tmp_path.glob("*.png"):
        assert png.stat().st_size > 10_000  # a rendered page, not a blank one


def test_the_page_shows_the_table_a_pair_was_asked_from_and_filters_by_it(served_grounded, tmp_path):
    work, url = served_grounded
    page = browser(tmp_path, "ann")
    try:
        page.get(url + "&reviewer=ann")
        wait_text(page, "position", r"^\d+ / 10$")
        assert page.find_element(By.ID, "asked-from").is_displayed()
        Select(page.find_element(By.ID, "filter-asked")).select_by_value("table")
        wait_text(page, "question", r"^How much water does the zeolite take up")

        def shown(d):
            grid = d.find_element(By.CSS_SELECTOR, "#component-body table")
            return (
                d.find_element(By.ID, "component-label").text,
                [th.text for th in grid.find_elements(By.TAG_NAME, "th")],
                [td.text for td in grid.find_elements(By.TAG_NAME, "td")],
                [m.text for m in d.find_elements(By.CSS_SELECTOR, "#passage .mention")],
            )

        expected = ("Table 1", ["T (°C)", "uptake (g/g)"], ["20", "0.21", "80", "0.105"], ["Table 1"])
        # read again while the page is still drawing (an element replaced under the read is stale)
        WebDriverWait(page, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: shown(d) == expected
        )
        page.save_screenshot(str(tmp_path / "table.png"))
        Select(page.find_element(By.ID, "filter-asked")).select_by_value("equation")
        wait_text(page, "component-label", r"^Eq\. \(1\)$")
        assert page.find_element(By.CSS_SELECTOR, "#component-body pre").text.startswith("q(T) =")
        Select(page.find_element(By.ID, "filter-asked")).select_by_value("prose")
        WebDriverWait(page, 15).until(lambda d: not d.find_element(By.ID, "component").is_displayed())
    finally:
        page.quit()
    assert (tmp_path / "table.png").stat().st_size > 10_000
