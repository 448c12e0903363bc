"""The web playground `afm serve` serves at /, driven in headless Chromium (Debian chromium +
chromium-driver, selenium from PyPI): the page loads without the API key and lists the models
once the key is entered; a chat turn streams the same greedy answer the API gives; schema mode
shows the growing snapshot and a final value valid for the schema (jsonschema); tool mode shows
the tool call; the profiler has a row per turn; the partial-JSON closer completes unfinished
texts. `--screenshot PATH` saves the page after the schema turn (docs/playground.png).
AFM_BIN is set by CTest.
"""
import argparse
import json
import os
import shutil
import sys

import jsonschema
import openai

sys.path.insert(0, os.path.dirname(__file__))
from openai_client_test import KEY, MODEL_ID, Server  # noqa: E402

os.environ.setdefault("SE_OFFLINE", "true")  # never let selenium look for drivers online
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

SYSTEM = "You are a helpful assistant."


def browser():
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        sys.exit("chromium and chromedriver are missing: scripts/setup --tests installs them")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


def wait(driver, condition, timeout=120):
    return WebDriverWait(driver, timeout).until(lambda d: condition(d))


def send(driver, text):
    box = driver.find_element(By.ID, "prompt")
    box.clear()
    box.send_keys(text)
    driver.find_element(By.ID, "send").click()
    count = len(driver.find_elements(By.CSS_SELECTOR, "#messages .message.assistant"))
    return count


def last_answer(driver):
    done = driver.find_elements(By.CSS_SELECTOR, "#messages .message.assistant[data-done=true]")
    return done[-1].find_element(By.CSS_SELECTOR, ".text").text if done else None


def wait_turn(driver, turn):
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f"#profile tr[data-turn='{turn}']"))
    row = driver.find_element(By.CSS_SELECTOR, f"#profile tr[data-turn='{turn}']")
    cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
    assert cells[0] == str(turn), cells
    prefill, first, tokens, rate, mask = (float(c) for c in cells[2:])
    assert prefill > 0 and first > 0 and tokens > 0 and rate > 0 and mask >= 0, cells
    return cells


def check_chat(driver, client):
    question = "What is 12 + 7?"
    send(driver, question)
    wait_turn(driver, 1)
    want = client.chat.completions.create(
        model=MODEL_ID, temperature=0, max_tokens=256,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}])
    assert last_answer(driver) == want.choices[0].message.content.strip(), last_answer(driver)


def check_partial_json(driver):
    cases = {'{"name": "Tom B': {"name": "Tom B"}, '{"name": "Tom", "ag': {"name": "Tom"},
             '{"a": [1, 2': {"a": [1, 2]}, '{"a": "x\\': {"a": "x"}, '{"a": {"b": tr': {"a": {}},
             '[': [], '{"a": 1, ': {"a": 1}}
    for text, want in cases.items():
        got = driver.execute_script("return partialValue(arguments[0]);", text)
        assert got == want, (text, got, want)


def check_schema(driver, screenshot):
    Select(driver.find_element(By.ID, "mode")).select_by_value("schema")
    driver.find_element(By.ID, "clear").click()
    send(driver, "Tom Berg is a 52-year-old baker who lives in Oslo.")
    wait(driver, lambda d: d.find_element(By.ID, "value").get_attribute("data-final") == "true")
    schema = json.loads(driver.find_element(By.ID, "schema").get_attribute("value"))
    value = json.loads(driver.find_element(By.ID, "value").text)
    jsonschema.validate(value, schema)
    snapshot = driver.find_element(By.ID, "snapshot").text
    assert json.loads(snapshot) == value
    wait_turn(driver, 2)
    if screenshot:
        driver.save_screenshot(screenshot)


def check_tools(driver):
    Select(driver.find_element(By.ID, "mode")).select_by_value("tools")
    Select(driver.find_element(By.ID, "tool-choice")).select_by_value("required")
    driver.find_element(By.ID, "clear").click()
    send(driver, "What is the weather in Paris right now?")
    wait_turn(driver, 3)
    calls = driver.find_elements(By.CSS_SELECTOR, "#messages .message.tool-call .text")
    assert calls, driver.find_element(By.ID, "messages").text
    name, args = calls[0].text.split("(", 1)
    assert name == "get_weather", calls[0].text
    assert "city" in json.loads(args[:-1]), calls[0].text


def check_routes(server):
    status, body = server.raw("GET", "/")  # no key needed for the page itself
    assert status == 200 and b"afm playground" in body
    status, body = server.raw("GET", "/playground.js")
    assert status == 200 and b"partialValue" in body
    status, _ = server.raw("GET", "/v1/models")  # the API still needs it
    assert status == 401
    off = Server("--no-playground")
    try:
        assert off.raw("GET", "/")[0] == 404
    finally:
        assert off.stop() == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--screenshot", help="save the page after the schema turn here")
    args = parser.parse_args()
    server = Server("--api-key", KEY)
    driver = None
    try:
        check_routes(server)
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
        driver = browser()
        driver.get(server.url + "/")
        wait(driver, lambda d: "could not list models" in d.find_element(By.ID, "status").text)
        key = driver.find_element(By.ID, "api-key")
        key.send_keys(KEY)
        driver.execute_script("arguments[0].dispatchEvent(new Event('change'));", key)
        wait(driver, lambda d: d.find_element(By.ID, "status").text == "ready")
        assert Select(driver.find_element(By.ID, "model")).first_selected_option.text == MODEL_ID
        check_partial_json(driver)
        check_chat(driver, client)
        check_schema(driver, args.screenshot)
        check_tools(driver)
        client.close()
    finally:
        if driver:
            driver.quit()
        assert server.stop() == 0


if __name__ == "__main__":
    main()
