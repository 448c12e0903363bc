"""Typed errors, one per GenerationError kind of the C++ framework (include/afm/errors.h)."""


class GenerationError(RuntimeError):
    """A response could not be generated; `kind` names why (the subclasses below)."""

    kind = "generation_error"

    def __init__(self, message, tool_name=""):
        super().__init__(message)
        self.tool_name = tool_name


class ExceededContextWindowSize(GenerationError):
    kind = "exceeded_context_window_size"


class ConcurrentRequests(GenerationError):
    kind = "concurrent_requests"


class UnsupportedGuide(GenerationError):
    kind = "unsupported_guide"


class DecodingFailure(GenerationError):
    kind = "decoding_failure"


class ToolCallError(GenerationError):
    """A tool raised; `tool_name` says which."""

    kind = "tool_call_error"


class GuardrailViolation(GenerationError):
    kind = "guardrail_violation"


class Refusal(GenerationError):
    kind = "refusal"


class Unavailable(GenerationError):
    kind = "unavailable"


_BY_KIND = {cls.kind: cls for cls in (ExceededContextWindowSize, ConcurrentRequests,
                                       UnsupportedGuide, DecodingFailure, ToolCallError,
                                       GuardrailViolation, Refusal, Unavailable)}


def typed(error):
    """The typed exception for the module's GenerationError(kind, message, tool_name)."""
    kind, message, tool_name = error.args
    return _BY_KIND.get(kind, GenerationError)(message, tool_name)
