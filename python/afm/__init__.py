"""afm: Apple-style foundation models on your own machine.

    import afm
    session = afm.LanguageModelSession(instructions="Extract the person.")
    person = session.respond("Ana Lima, 34, is a nurse in Lisbon.", generating=Person).content

See docs/python.md. Models are GGUF files; the shipped default model is found automatically.
"""
from ._afm import version as _version
from ._session import (GenerationOptions, LanguageModelSession, Response, Snapshot,
                       SystemLanguageModel, Usage)
from ._tools import tool
from .errors import (ConcurrentRequests, DecodingFailure, ExceededContextWindowSize,
                     GenerationError, GuardrailViolation, Refusal, ToolCallError, Unavailable,
                     UnsupportedGuide)

__version__ = _version()

__all__ = [
    "ConcurrentRequests", "DecodingFailure", "ExceededContextWindowSize", "GenerationError",
    "GenerationOptions", "GuardrailViolation", "LanguageModelSession", "Refusal", "Response",
    "Snapshot", "SystemLanguageModel", "ToolCallError", "Unavailable", "UnsupportedGuide",
    "Usage", "tool",
]
