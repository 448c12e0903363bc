"""The `jsonschema` package as the oracle for generated instances, on exact decimals.

JSON Schema defines `multipleOf` on mathematical values, but on Python floats the package
divides and checks the quotient: 0.07 / 0.01 = 7.000000000000001, so it rejects 16% of the
multiples of 0.01 below 10. Schema and instance are therefore parsed with `decimal.Decimal`
(an integral Decimal counts as an integer) and `multipleOf` divides exact fractions, which
makes the check exact for every engine.
Formats are asserted, with the schema's own draft.

`pattern` is an ECMA-262 regex with the `u` flag, which Python's `re` (the package's default)
reads differently in places and cannot read at all in others (`\\p{L}`, ECMA-only syntax). A
string matches only if every engine that compiles the pattern finds a match: Python's `re` and
`regress` (an ECMA-262 engine). A pattern neither compiles is an error.
"""
import json
import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import jsonschema
import regress


def _is_integer(checker, instance):
    if isinstance(instance, Decimal):
        return instance.is_finite() and instance == instance.to_integral_value()
    return jsonschema.Draft202012Validator.TYPE_CHECKER.is_type(instance, "integer")


def _multiple_of(validator, divisor, instance, schema):
    """multipleOf on exact fractions (Decimal's own % stops at its 28-digit precision)."""
    if not validator.is_type(instance, "number"):
        return
    finite = not isinstance(instance, float) or math.isfinite(instance)
    if not finite or (Fraction(instance) / Fraction(divisor)).denominator != 1:
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {divisor}")


def _pattern_matches(pattern, text):
    verdicts = []
    try:
        verdicts.append(re.search(pattern, text) is not None)
    except re.error:
        pass
    try:
        verdicts.append(regress.Regex(pattern, "u").find(text) is not None)
    except regress.RegressError:
        pass
    if not verdicts:
        raise ValueError(f"no regex engine compiles the pattern {pattern!r}")
    return all(verdicts)


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not _pattern_matches(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _number(text):
    try:
        return Decimal(text)
    except InvalidOperation:  # an exponent past Decimal's range: a float (inf or 0), as before
        return float(text)


def loads(text):
    """JSON text -> Python value with every non-integer number a Decimal."""
    return json.loads(text, parse_float=_number)


def validator(schema):
    """An exact validator for `schema` (a dict or JSON text; floats in a dict are re-read)."""
    if not isinstance(schema, str):
        schema = json.dumps(schema)
    schema = loads(schema)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    exact = jsonschema.validators.extend(
        cls, validators={"multipleOf": _multiple_of, "pattern": _pattern},
        type_checker=cls.TYPE_CHECKER.redefine("integer", _is_integer))
    return exact(schema, format_checker=cls.FORMAT_CHECKER)
