#!/usr/bin/env python3
"""Task evaluation: does a model do the tasks it was trained on, on inputs it has never seen?

Generates N held-out items per task (extraction, arithmetic, tools), deterministic from --seed,
starts `afm serve` with the model on a free port, sends every item through the official `openai`
client (temperature 0, one request at a time), scores the replies and prints a table; --json /
--out give the full results with one record per item (prompt, expected, got).

The items are deliberately NOT drawn from the training generator (src/data/synth): this file has
its own word lists (first and last names, cities, companies, occupations, events) and its own
sentence templates and system prompts. At import time it checks, when the C++ sources are
present, that none of its names, cities, companies, occupations or events occur in
src/data/synth/*.cpp (as whole words), that no static multi-word piece of its templates occurs
there, and that no multi-word string literal of the C++ generator occurs in its templates.
What is shared on purpose is the model's API: the tool names, descriptions and parameter
schemas (tool_catalog.cpp), the field names and types of the extraction records, and the
"The answer is N." format the arithmetic scorer looks for.

Scoring (a reply that is missing, not JSON, or of the wrong shape counts as wrong, never crashes):
  extraction  the reply parsed as JSON; each field equal to the truth (strings exactly, numbers
              numerically); field exact-match rate and whole-record exact-match rate.
  arithmetic  the integer after "The answer is", else the last integer in the reply, equals the
              truth; accuracy overall, for addition and for subtraction.
  chat        small talk (greetings, thanks, farewells, "how are you", "what can you do"), with
              tools offered to half of the items and tool_choice auto: in_text (answered in text,
              no tool call) and on_topic (in text, and the reply has a word of its kind: a
              greeting back, "welcome"/"glad", "bye", "well"/"fine", or what the model does).
  tools       the first tool call's name (name accuracy) and name plus arguments (argument
              accuracy). Arguments are compared as JSON values, except that get_weather's
              "unit": "celsius" equals leaving the unit out (the tool's default), and calculate's
              expression is compared with spaces removed.

Usage: bench/task_eval.py --model models/afm-device-21m.gguf [--n 100] [--seed 7]
           [--tasks extraction,arithmetic,tools] [--afm build/afm] [--json] [--out FILE.json]
"""
import argparse
import datetime
import glob
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = ("extraction", "arithmetic", "tools", "chat")

# ---------------------------------------------------------------------------------------------
# Word lists (none of these occur in the training generator; checked below).

FIRST_NAMES = [
    "Beatrix", "Cormac", "Delphine", "Evander", "Freya", "Gideon", "Henrietta", "Ignatius",
    "Juliet", "Kasimir", "Linnea", "Magnus", "Niamh", "Orla", "Percival", "Quentin", "Rosalind",
    "Soren", "Thea", "Ulrich", "Vesna", "Wilhelmina", "Yasmin", "Zeno", "Agnes", "Bruno",
    "Cecily", "Dmitri", "Esme", "Florian", "Greta", "Horace", "Imogen", "Jasper", "Katya",
    "Leopold", "Mirela", "Nikolai", "Odette", "Rupert"]
LAST_NAMES = [
    "Abernathy", "Blackwood", "Castellanos", "Drummond", "Eriksen", "Fairbanks", "Gallagher",
    "Hollander", "Ishikawa", "Jablonski", "Kaplan", "Lombardi", "Mahoney", "Nakamura",
    "Oyelaran", "Pemberton", "Quintero", "Radcliffe", "Szabo", "Thornton", "Underwood",
    "Vasquez", "Whitaker", "Zielinski", "Ferreira", "Grunewald", "Halloran", "Kowalczyk",
    "Lindgren", "Marchetti"]
CITIES = [
    "Bilbao", "Salzburg", "Tampere", "Ljubljana", "Riga", "Vilnius", "Antwerp", "Bordeaux",
    "Genoa", "Aarhus", "Graz", "Brno", "Leipzig", "Nantes", "Cardiff", "Halifax", "Winnipeg",
    "Adelaide", "Perth", "Sapporo", "Fukuoka", "Daejeon", "Chiang Mai", "Kampala", "Dakar",
    "Mombasa", "Rosario", "Medellin", "Tucson", "Boise", "Calgary", "Hobart", "Wellington",
    "Trondheim", "Dresden", "Galway", "Sarajevo", "Tbilisi", "Cebu", "Lusaka"]
COMPANIES = [
    "Copperleaf Studios", "Tidewater Freight", "Brightmoor Clinic", "Kestrel Aerospace",
    "Saffron Kitchens", "Ironbridge Capital", "Larkspur Books", "Everglow Solar",
    "Nimbus Cloudworks", "Driftwood Outfitters", "Marigold Bakery", "Stonegate Legal",
    "Hollowpine Furniture", "Bramble Coffee", "Wavecrest Telecom", "Thistle Veterinary"]
OCCUPATIONS = [
    "welder", "optician", "surveyor", "beekeeper", "midwife", "zoologist", "paramedic",
    "plumber", "actuary", "cartographer", "sommelier", "locksmith", "radiographer",
    "geologist", "jeweller", "tailor", "glassblower", "meteorologist"]
EVENTS = [
    "kite festival", "quilting fair", "rowing regatta", "hackathon", "comedy night",
    "lantern parade", "spelling bee", "cycling race", "orchestra gala", "cheese market",
    "robot sumo contest", "vintage car show", "salsa workshop", "astronomy evening"]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
CURRENCIES = [("USD", "$", "US dollars"), ("EUR", "€", "euros"), ("GBP", "£", "British pounds")]
UNIT_NAMES = {"km": "kilometers", "mi": "miles", "kg": "kilograms", "lb": "pounds",
              "m": "meters", "ft": "feet", "l": "liters", "gal": "US gallons",
              "celsius": "degrees Celsius", "fahrenheit": "degrees Fahrenheit"}

# ---------------------------------------------------------------------------------------------
# Templates (own phrasings; placeholders in braces).

EXTRACTION_SYSTEM = "Read the passage and report its facts as a JSON record matching the schema."
EXTRACTION_LEADS = ["Pull the fields out of this passage:\n", "Passage: ",
                    "Fill the record from these notes.\n\n", ""]
PERSON_TEXTS = [
    "{name}, aged {age}, earns a living as {a_job} in {city}.",
    "{name} ({age}) is employed as {a_job}; the family home is in {city}.",
    "Staff note: {job} {name}, {age} years of age, has relocated to the {city} branch.",
    "Everyone in {city} knows {name}, the {age}-year-old local {job}.",
    "Having turned {age} this year, {name} keeps working as {a_job} from a flat in {city}.",
]
EVENT_TEXTS = [
    "{count} people signed up for the {event}, which {city} hosts on {date}.",
    "Mark your diary: the {event} in {city} is scheduled for {date} and expects {count} "
    "participants.",
    "The town of {city} will welcome {count} participants to its {event} on {date}.",
    "Registrations for the {event} ({city}, {date}) closed at {count}.",
]
PAYMENT_TEXTS = [
    "{payer} wired {amount} to {payee} on {date}.",
    "Receipt: {payee} acknowledges {amount} paid in by {payer}, dated {date}.",
    "On {date} {payee} was paid {amount} by {payer}.",
    "{payer} covered a bill of {amount} from {payee}; the money went through on {date}.",
]

ARITHMETIC_SYSTEM = "Work out the sum or difference and state the result."
ADD_TEXTS = ["Compute {a} + {b}.", "What do you get if you add {a} and {b}?",
             "Add {b} to {a}.", "If you combine {a} and {b}, what total do you get?",
             "{a} plus {b} equals what?"]
SUB_TEXTS = ["Compute {a} - {b}.", "What do you get when you take {b} away from {a}?",
             "Subtract {b} from {a}.", "Work out {a} minus {b}.",
             "Start from {a} and remove {b}. What remains?"]

TOOLS_SYSTEM = "Functions are available to you; call the right one with exact arguments."
WEATHER_TEXTS = ["Is it raining in {city} at the moment?", "Give me the temperature in {city}.",
                 "I'm heading to {city} this afternoon; what's it like there?",
                 "Check the sky over {city} for me."]
WEATHER_UNIT_TEXTS = ["Report it in {unit}.", "I'd like the reading in {unit}."]
CALC_TEXTS = {
    "add": "Add {a} and {b} together.",
    "sub": "Take {b} from {a}.",
    "mul": "Multiply {a} by {b}.",
    "mix": "Add {a} and {b}, then multiply the result by {c}.",
    "div": "Split {a} into {c} equal parts; how big is each part?",
}
CONVERT_TEXTS = ["I have {value} {from_name}; what does that come to in {to_name}?",
                 "Express {value} {from_name} in {to_name}.",
                 "{value} {from_name} equals how many {to_name}?"]
CALENDAR_TEXTS = ["Is anything scheduled for {date}?", "Show my appointments on {date}.",
                  "What's on my agenda for {date}?"]
RATE_TEXTS = ["What's the rate from {base_name} to {quote_name} today?",
              "How many {quote_name} would I get for {amount} {base_name}?",
              "I'm changing {amount} {base_code} into {quote_code}; which rate applies?"]

# The tools as the training data declares them (src/data/synth/tool_catalog.cpp): this is the
# model's API, so names, descriptions and parameter schemas are the same on purpose.
CHAT_SYSTEM = "Chat with the user."
CHAT_TEXTS = {
    "greeting": ["Good afternoon!", "Hiya", "Greetings, bot.", "Hello hello", "Yo! Anybody home?"],
    "thanks": ["Much appreciated.", "Thanks a bunch!", "I appreciate it.", "Many thanks for that."],
    "farewell": ["Catch you later.", "Signing off now.", "Farewell!", "Talk tomorrow, bye."],
    "wellbeing": ["How have you been?", "Hope you're well?", "How is your day going?"],
    "capabilities": ["What are your skills?", "What sort of things can you help with?",
                     "Introduce yourself, please."],
}
# A reply is on topic when it has a word of its kind (case-insensitive, whole words).
CHAT_TOPIC = {
    "greeting": r"hello|hi|hey|greetings|good (morning|afternoon|evening)|welcome|help",
    "thanks": r"welcome|glad|pleasure|any ?time|no problem",
    "farewell": r"bye|goodbye|see you|take care|later|farewell",
    "wellbeing": r"well|fine|good|great|okay|ok",
    "capabilities": r"extract\w*|json|arithmetic|sums?|tools?|questions?|help",
}

_UNIT_ENUM = {"type": "string", "enum": list(UNIT_NAMES)}
_CURRENCY_ENUM = {"type": "string", "enum": ["USD", "EUR", "GBP"]}


def _closed(properties, optional=()):
    return {"type": "object", "properties": properties,
            "required": [k for k in properties if k not in optional],
            "additionalProperties": False}


TOOL_SPECS = {
    "get_weather": ("Current weather conditions for a city.",
                    _closed({"city": {"type": "string"},
                             "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                            optional=("unit",))),
    "calculate": ("Evaluates an arithmetic expression with + - * / and parentheses.",
                  _closed({"expression": {"type": "string"}})),
    "convert_units": ("Converts a quantity between units of length, mass, volume or temperature.",
                      _closed({"value": {"type": "number"}, "from_unit": _UNIT_ENUM,
                               "to_unit": _UNIT_ENUM})),
    "get_calendar_events": ("Lists the events in the user's calendar on a date.",
                            _closed({"date": {"type": "string",
                                              "description": "date as YYYY-MM-DD"}})),
    "get_exchange_rate": ("The current exchange rate from one currency to another.",
                          _closed({"base": _CURRENCY_ENUM, "quote": _CURRENCY_ENUM})),
}


def tool_param(name):
    description, parameters = TOOL_SPECS[name]
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}


# ---------------------------------------------------------------------------------------------
# Separation from the training generator, checked at import time.

def _all_templates():
    out = [EXTRACTION_SYSTEM, ARITHMETIC_SYSTEM, TOOLS_SYSTEM]
    for group in (EXTRACTION_LEADS, PERSON_TEXTS, EVENT_TEXTS, PAYMENT_TEXTS, ADD_TEXTS,
                  SUB_TEXTS, WEATHER_TEXTS, WEATHER_UNIT_TEXTS, list(CALC_TEXTS.values()),
                  CONVERT_TEXTS, CALENDAR_TEXTS, RATE_TEXTS, [CHAT_SYSTEM],
                  *CHAT_TEXTS.values()):
        out.extend(group)
    return out


def evaluation_words():
    """The names, cities, companies, occupations and events the evaluation items are made of:
    none may occur in the training generator (check_separation) or in a training answer
    (bench/drop_eval_names.py)."""
    return FIRST_NAMES + LAST_NAMES + CITIES + COMPANIES + OCCUPATIONS + EVENTS


def check_separation(synth_dir=os.path.join(ROOT, "src", "data", "synth")):
    """Raises AssertionError when a word or template of this file is found in the training
    generator's sources (skipped when they are not present)."""
    sources = sorted(glob.glob(os.path.join(synth_dir, "*.cpp")))
    if not sources:
        return
    cpp = ""
    for path in sources:
        with open(path, encoding="utf-8") as f:
            cpp += f.read() + "\n"
    for word in evaluation_words():
        found = re.search(r"\b" + re.escape(word) + r"\b", cpp, re.IGNORECASE)
        assert not found, f"eval word {word!r} occurs in the training generator"
    cpp_lower = cpp.lower()
    templates = _all_templates()
    for template in templates:
        for piece in re.split(r"\{[a-z_]+\}", template):
            piece = piece.strip()
            if len(piece) >= 10 and " " in piece:
                assert piece.lower() not in cpp_lower, (
                    f"template piece {piece!r} occurs in the training generator")
    joined = "\n".join(templates).lower()
    for literal in re.findall(r'"((?:[^"\\\n]|\\.)*)"', cpp):
        literal = literal.strip()
        if len(literal) >= 10 and " " in literal:  # phrases, not single words
            assert literal.lower() not in joined, (
                f"training string {literal!r} occurs in an eval template")


check_separation()

# ---------------------------------------------------------------------------------------------
# Generation: items are dicts {task, kind, messages, expected, ...}; item i of a task depends
# only on (seed, task, i).


def with_commas(n):
    return f"{n:,}"


def random_date(rng, first_year, last_year):
    start = datetime.date(first_year, 1, 1).toordinal()
    end = datetime.date(last_year, 12, 31).toordinal()
    return datetime.date.fromordinal(rng.randint(start, end))


def ordinal(n):
    if 11 <= n % 100 <= 13:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def spoken_date(d, style):
    """A date in one of three prose styles of this file's own."""
    month = MONTHS[d.month - 1]
    if style == 0:
        return f"{WEEKDAYS[d.weekday()]}, {month} {d.day}, {d.year}"
    if style == 1:
        return f"{month} the {ordinal(d.day)}, {d.year}"
    return f"{d.day} {month[:3]}. {d.year}"


def money_text(cents, currency, style):
    code, symbol, _ = currency
    whole, frac = divmod(cents, 100)
    amount = with_commas(whole) + (f".{frac:02d}" if frac else "")
    return f"{amount} {code}" if style == 0 else f"{symbol}{amount}"


def as_number(cents):
    return cents // 100 if cents % 100 == 0 else cents / 100


def full_name(rng):
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def _schema(fields):
    """A closed object schema with every field required; fields: (name, type, description)."""
    properties = {}
    for name, kind, description in fields:
        properties[name] = {"type": kind}
        if description:
            properties[name]["description"] = description
    return _closed(properties)


ISO = "calendar date written YYYY-MM-DD"


def make_extraction(rng):
    kind = rng.choice(["person", "event", "payment"])
    if kind == "person":
        name, age = full_name(rng), rng.randint(21, 70)
        job, city = rng.choice(OCCUPATIONS), rng.choice(CITIES)
        a_job = ("an " if job[0] in "aeiou" else "a ") + job
        text = rng.choice(PERSON_TEXTS).format(name=name, age=age, job=job, a_job=a_job,
                                               city=city)
        schema = _schema([("name", "string", "the person's full name"),
                          ("age", "integer", "years"), ("city", "string", "where they live"),
                          ("occupation", "string", "what they work as")])
        expected = {"name": name, "age": age, "city": city, "occupation": job}
    elif kind == "event":
        event, city = rng.choice(EVENTS), rng.choice(CITIES)
        d, count = random_date(rng, 2023, 2027), rng.randint(30, 4000)
        text = rng.choice(EVENT_TEXTS).format(event=event, city=city, count=with_commas(count),
                                              date=spoken_date(d, rng.randrange(3)))
        schema = _schema([("event", "string", "what the event is"), ("city", "string", None),
                          ("date", "string", ISO), ("attendees", "integer", None)])
        expected = {"event": event, "city": city, "date": d.isoformat(), "attendees": count}
    else:
        payer, payee = full_name(rng), rng.choice(COMPANIES)
        currency = rng.choice(CURRENCIES)
        cents = rng.randint(3, 3000) * 100 if rng.random() < 0.5 else rng.randint(100, 300000)
        d = random_date(rng, 2022, 2026)
        text = rng.choice(PAYMENT_TEXTS).format(
            payer=payer, payee=payee, amount=money_text(cents, currency, rng.randrange(2)),
            date=spoken_date(d, rng.randrange(3)))
        schema = _schema([("payer", "string", "who sent the money"),
                          ("payee", "string", "who got the money"),
                          ("amount", "number", "in units of the currency"),
                          ("currency", "string", "ISO 4217 code"), ("date", "string", ISO)])
        schema["properties"]["currency"]["enum"] = [c[0] for c in CURRENCIES]
        expected = {"payer": payer, "payee": payee, "amount": as_number(cents),
                    "currency": currency[0], "date": d.isoformat()}
    prompt = rng.choice(EXTRACTION_LEADS) + text
    return {"task": "extraction", "kind": kind,
            "messages": [{"role": "system", "content": EXTRACTION_SYSTEM},
                         {"role": "user", "content": prompt}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": f"{kind}_record", "strict": True,
                                                "description": f"The {kind} in the passage.",
                                                "schema": schema}},
            "expected": expected}


def make_arithmetic(rng):
    kind = rng.choice(["add", "sub"])
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    if kind == "sub":
        a, b = max(a, b), min(a, b)
        truth, prompt = a - b, rng.choice(SUB_TEXTS).format(a=a, b=b)
    else:
        truth, prompt = a + b, rng.choice(ADD_TEXTS).format(a=a, b=b)
    return {"task": "arithmetic", "kind": kind,
            "messages": [{"role": "system", "content": ARITHMETIC_SYSTEM},
                         {"role": "user", "content": prompt}],
            "expected": truth}


def _weather(rng):
    city = rng.choice(CITIES)
    prompt, args = rng.choice(WEATHER_TEXTS).format(city=city), {"city": city}
    if rng.random() < 0.3:
        unit = rng.choice(["celsius", "fahrenheit"])
        prompt += " " + rng.choice(WEATHER_UNIT_TEXTS).format(unit=unit.capitalize())
        args["unit"] = unit
    return prompt, args


def _calculate(rng):
    form = rng.choice(list(CALC_TEXTS))
    a, b, c = rng.randint(2, 9999), rng.randint(2, 999), rng.randint(2, 99)
    if form == "div":
        a = b * c
    expression = {"add": f"{a} + {b}", "sub": f"{a} - {b}", "mul": f"{a} * {b}",
                  "mix": f"({a} + {b}) * {c}", "div": f"{a} / {c}"}[form]
    prompt = CALC_TEXTS[form].format(a=with_commas(a), b=b, c=c)
    return prompt, {"expression": expression}


def _convert(rng):
    pairs = [("km", "mi"), ("mi", "km"), ("kg", "lb"), ("lb", "kg"), ("m", "ft"), ("ft", "m"),
             ("l", "gal"), ("gal", "l"), ("celsius", "fahrenheit"), ("fahrenheit", "celsius")]
    src, dst = rng.choice(pairs)
    value = rng.randint(1, 800) if rng.random() < 0.6 else rng.randint(10, 8000) / 10
    if value == int(value):
        value = int(value)  # "107", never "107.0"
    if src in ("celsius", "fahrenheit"):
        value = rng.randint(0, 45) if src == "celsius" else rng.randint(33, 110)
    prompt = rng.choice(CONVERT_TEXTS).format(value=value, from_name=UNIT_NAMES[src],
                                              to_name=UNIT_NAMES[dst])
    return prompt, {"value": value, "from_unit": src, "to_unit": dst}


def _calendar(rng):
    d = random_date(rng, 2024, 2026)
    prompt = rng.choice(CALENDAR_TEXTS).format(date=spoken_date(d, rng.randrange(3)))
    return prompt, {"date": d.isoformat()}


def _rate(rng):
    base, quote = rng.sample(CURRENCIES, 2)
    prompt = rng.choice(RATE_TEXTS).format(
        base_name=base[2], quote_name=quote[2], base_code=base[0], quote_code=quote[0],
        amount=rng.randint(2, 400) * 5)
    return prompt, {"base": base[0], "quote": quote[0]}


TOOL_MAKERS = {"get_weather": _weather, "calculate": _calculate, "convert_units": _convert,
               "get_calendar_events": _calendar, "get_exchange_rate": _rate}


def make_tools(rng):
    name = rng.choice(list(TOOL_MAKERS))
    prompt, args = TOOL_MAKERS[name](rng)
    others = rng.sample([t for t in TOOL_SPECS if t != name], rng.randint(0, 2))
    offered = others + [name]
    rng.shuffle(offered)
    return {"task": "tools", "kind": name,
            "messages": [{"role": "system", "content": TOOLS_SYSTEM},
                         {"role": "user", "content": prompt}],
            "tools": [tool_param(t) for t in offered],
            "expected": {"name": name, "arguments": args}}


def make_chat(rng):
    kind = rng.choice(list(CHAT_TEXTS))
    item = {"task": "chat", "kind": kind,
            "messages": [{"role": "system", "content": CHAT_SYSTEM},
                         {"role": "user", "content": rng.choice(CHAT_TEXTS[kind])}],
            "expected": kind}
    if rng.random() < 0.5:  # tools on offer that the message does not call for
        item["tools"] = [tool_param(t) for t in rng.sample(list(TOOL_SPECS), rng.randint(1, 3))]
    return item


MAKERS = {"extraction": make_extraction, "arithmetic": make_arithmetic, "tools": make_tools,
          "chat": make_chat}
MAX_TOKENS = {"extraction": 160, "arithmetic": 64, "tools": 96, "chat": 48}


def generate(task, n, seed):
    rng = random.Random(f"afm-task-eval/{seed}/{task}")
    return [MAKERS[task](rng) for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# Scoring: pure functions of (expected, reply), never raising on bad replies.


def _same_value(want, got):
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, (int, float)):
        return isinstance(got, (int, float)) and got == want
    return type(want) is type(got) and want == got


def score_extraction(expected, content):
    """{"valid_json", "fields": {name: bool}, "record": bool} for a reply text."""
    try:
        got = json.loads(content) if isinstance(content, str) else None
    except ValueError:
        got = None
    valid = isinstance(got, dict)
    fields = {k: valid and k in got and _same_value(v, got[k]) for k, v in expected.items()}
    record = valid and all(fields.values()) and set(got) == set(expected)
    return {"valid_json": valid, "fields": fields, "record": record}


ANSWER = re.compile(r"The answer is\s*\$?\s*(-?\d[\d,]*)")  # the training answer format


def parse_answer(content):
    """The integer a reply answers: after "The answer is", else the last integer; None if none."""
    if not isinstance(content, str):
        return None
    m = ANSWER.search(content)
    if m:
        return int(m.group(1).replace(",", ""))
    numbers = re.findall(r"-?\d[\d,]*", content)
    return int(numbers[-1].replace(",", "")) if numbers else None


def score_arithmetic(expected, content):
    """correct: parse_answer equals the truth; strict: only "The answer is N" counts."""
    got = parse_answer(content)
    m = ANSWER.search(content) if isinstance(content, str) else None
    strict = bool(m) and int(m.group(1).replace(",", "")) == expected
    return {"parsed": got, "correct": got == expected, "strict": strict}


def score_chat(kind, got):
    """in_text: a non-empty text reply and no tool call; on_topic: also a word of its kind."""
    got = got if isinstance(got, dict) else {}
    content = got.get("content") if isinstance(got.get("content"), str) else ""
    in_text = bool(content.strip()) and not got.get("tool_calls")
    pattern = CHAT_TOPIC.get(kind)
    on_topic = in_text and bool(pattern) and bool(
        re.search(r"\b(" + pattern + r")\b", content, re.IGNORECASE))
    return {"in_text": in_text, "on_topic": on_topic}


def _normalized_args(name, args):
    if not isinstance(args, dict):
        return args
    args = dict(args)
    if name == "get_weather" and args.get("unit") == "celsius":
        del args["unit"]
    if name == "calculate" and isinstance(args.get("expression"), str):
        args["expression"] = re.sub(r"\s+", "", args["expression"])
    return args


def _same_json(want, got):
    if isinstance(want, dict):
        return (isinstance(got, dict) and set(want) == set(got)
                and all(_same_json(v, got[k]) for k, v in want.items()))
    if isinstance(want, list):
        return (isinstance(got, list) and len(want) == len(got)
                and all(_same_json(w, g) for w, g in zip(want, got)))
    return _same_value(want, got)


def score_tools(expected, calls):
    """calls: [{"name", "arguments"}] with arguments a JSON string (as the API sends it)."""
    first = calls[0] if isinstance(calls, list) and calls and isinstance(calls[0], dict) else {}
    name_ok = first.get("name") == expected["name"]
    try:
        args = json.loads(first.get("arguments") or "")
    except (TypeError, ValueError):
        args = None
    args_ok = name_ok and _same_json(_normalized_args(expected["name"], expected["arguments"]),
                                     _normalized_args(expected["name"], args))
    return {"called": bool(first), "name": name_ok, "arguments": args_ok}


# ---------------------------------------------------------------------------------------------
# Running against `afm serve`.


class Server:
    """`afm serve` with the model on a free port (--port 0); stopped with SIGTERM."""

    def __init__(self, afm, model, threads=None, adapter=None):
        cmd = [afm, "serve", "-m", model, "--port", "0"]
        if threads:
            cmd += ["-t", str(threads)]
        if adapter:  # served as model id "<base>:adapter"
            cmd += ["--adapter", "adapter=" + adapter]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
        self.log, self.url = [], None
        ready = threading.Event()

        def read_stderr():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"listening on (http://\S+)", line)
                if m and not self.url:
                    self.url = m.group(1)
                    ready.set()
            ready.set()

        threading.Thread(target=read_stderr, daemon=True).start()
        if not ready.wait(120) or not self.url:
            self.stop()
            raise RuntimeError("afm serve did not start:\n" + "".join(self.log[-20:]))
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                    if json.load(r).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("afm serve: /health never answered ok")
            time.sleep(0.2)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def ask(client, model_id, item):
    """Sends one item; returns (got, finish_reason, error) where got is the reply text, or for
    tools {"tool_calls": [{"name", "arguments"}], "content"}."""
    kw = dict(model=model_id, messages=item["messages"], temperature=0,
              max_tokens=MAX_TOKENS[item["task"]])
    if "response_format" in item:
        kw["response_format"] = item["response_format"]
    if "tools" in item:
        kw["tools"] = item["tools"]
        kw["tool_choice"] = "required" if item["task"] == "tools" else "auto"
    try:
        r = client.chat.completions.create(**kw)
        choice = r.choices[0]
        if item["task"] in ("tools", "chat"):
            calls = [{"name": c.function.name, "arguments": c.function.arguments}
                     for c in (choice.message.tool_calls or [])]
            got = {"tool_calls": calls, "content": choice.message.content}
        else:
            got = choice.message.content
        return got, choice.finish_reason, None
    except Exception as e:  # an API error counts the item wrong, the run goes on
        return None, None, f"{type(e).__name__}: {e}"


def score_item(item, got):
    if item["task"] == "extraction":
        return score_extraction(item["expected"], got)
    if item["task"] == "arithmetic":
        return score_arithmetic(item["expected"], got)
    if item["task"] == "chat":
        return score_chat(item["expected"], got)
    return score_tools(item["expected"], (got or {}).get("tool_calls"))


def summarize(task, records):
    """[(metric, value, n)] for one task's scored records."""
    n = len(records)

    def rate(values):
        values = list(values)
        return (sum(1 for v in values if v) / len(values) if values else 0.0), len(values)

    rows = []
    if task == "extraction":
        fields = [ok for r in records for ok in r["score"]["fields"].values()]
        rows.append(("field_exact_match",) + rate(fields))
        rows.append(("record_exact_match",) + rate(r["score"]["record"] for r in records))
        rows.append(("valid_json",) + rate(r["score"]["valid_json"] for r in records))
    elif task == "arithmetic":
        rows.append(("accuracy",) + rate(r["score"]["correct"] for r in records))
        for kind in ("add", "sub"):
            rows.append((f"accuracy_{kind}",) +
                        rate(r["score"]["correct"] for r in records if r["kind"] == kind))
        rows.append(("accuracy_strict",) + rate(r["score"]["strict"] for r in records))
        rows.append(("answer_format",) +
                    rate(isinstance(r["got"], str) and "The answer is" in r["got"]
                         for r in records))
    elif task == "chat":
        rows.append(("in_text",) + rate(r["score"]["in_text"] for r in records))
        rows.append(("on_topic",) + rate(r["score"]["on_topic"] for r in records))
        for kind in CHAT_TEXTS:
            picked = [r["score"]["on_topic"] for r in records if r["kind"] == kind]
            if picked:
                rows.append((f"on_topic_{kind}",) + rate(picked))
    else:
        rows.append(("name_accuracy",) + rate(r["score"]["name"] for r in records))
        rows.append(("argument_accuracy",) + rate(r["score"]["arguments"] for r in records))
        for kind in TOOL_MAKERS:
            picked = [r["score"]["arguments"] for r in records if r["kind"] == kind]
            if picked:
                rows.append((f"argument_accuracy_{kind}",) + rate(picked))
    rows.append(("cut_off",) + rate(r["finish_reason"] == "length" for r in records))
    rows.append(("errors", sum(1 for r in records if r["error"]), n))
    return [{"metric": m, "value": round(v, 4) if isinstance(v, float) else v, "n": k}
            for m, v, k in rows]


def run_task(client, model_id, task, n, seed, progress=True):
    """Generates `n` items of `task` with `seed`, asks each through `client` (an openai.OpenAI
    on a server that serves `model_id`) and returns {"metrics": [...], "items": [records]}."""
    records, task_start = [], time.time()
    items = generate(task, n, seed)
    tty = progress and sys.stderr.isatty()
    for i, item in enumerate(items):
        got, finish_reason, error = ask(client, model_id, item)
        records.append({"kind": item["kind"], "prompt": item["messages"][-1]["content"],
                        "expected": item["expected"], "got": got,
                        "finish_reason": finish_reason, "error": error,
                        "score": score_item(item, got)})
        if tty:  # one line, rewritten in place
            print(f"\rtask_eval: {task} {i + 1}/{len(items)}", end="", file=sys.stderr,
                  flush=True)
    if progress:
        done = f"task_eval: {task} {len(items)}/{len(items)} ({time.time() - task_start:.1f} s)"
        print(("\r" if tty else "") + done, file=sys.stderr, flush=True)
    return {"metrics": summarize(task, records), "items": records}


def run_eval(args):
    import openai  # imported here so the scorers can be used without the client installed

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    model_id = os.path.basename(args.model)
    model_id = model_id[:-5] if model_id.endswith(".gguf") else model_id
    if args.adapter:
        model_id += ":adapter"
    started = time.time()
    server = Server(args.afm, args.model, args.threads, args.adapter)
    results = {"model": args.model, "adapter": args.adapter, "seed": args.seed, "n": args.n,
               "tasks": {}}
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", timeout=300,
                           max_retries=0)
    try:
        for task in tasks:
            results["tasks"][task] = run_task(client, model_id, task, args.n, args.seed)
    finally:
        client.close()  # an open keep-alive connection would hold the server's shutdown 15 s
        server.stop()
    results["wall_s"] = round(time.time() - started, 2)
    return results


def table(results, task_width=11, metric_width=36):
    """One line per (task, metric): value and item count (blank when unknown)."""
    lines = [f"{'task':<{task_width}} {'metric':<{metric_width}} {'value':>10} {'n':>7}"]
    for task, r in results["tasks"].items():
        for m in r["metrics"]:
            n = "" if m["n"] is None else m["n"]
            lines.append(f"{task:<{task_width}} {m['metric']:<{metric_width}} {m['value']:>10} {n:>7}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Held-out task evaluation of a model through `afm serve` (extraction, "
                    "arithmetic, tools, chat); items never share names or templates with the "
                    "training generator.")
    p.add_argument("--model", required=True, help="GGUF model file")
    p.add_argument("--afm", default=os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm")),
                   help="afm binary (default: $AFM_BIN, else build/afm)")
    p.add_argument("--adapter", help="LoRA adapter GGUF to run on top of the model (afm serve "
                   "--adapter)")
    p.add_argument("--n", type=int, default=100, help="items per task (default 100)")
    p.add_argument("--seed", type=int, default=7, help="generation seed (default 7)")
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset of "
                   + ",".join(TASKS))
    p.add_argument("--threads", type=int, default=None, help="afm serve -t (default: its own)")
    p.add_argument("--json", action="store_true",
                   help="print the full results (per-item records too) as JSON, not the table")
    p.add_argument("--out", help="also write the full results as JSON to this file")
    args = p.parse_args(argv)
    if args.n < 1:
        p.error("--n must be >= 1")
    for t in args.tasks.split(","):
        if t.strip() not in TASKS:
            p.error(f"unknown task {t.strip()!r} (known: {', '.join(TASKS)})")
    if not os.path.exists(args.model):
        p.error(f"no model file {args.model}")
    results = run_eval(args)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
    else:
        print(table(results))
        print(f"wall time {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
