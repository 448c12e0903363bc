// The Python extension module afm._afm (nanobind): the C++ framework's models, sessions and
// tools, with JSON crossing the boundary as text (the Python package, python/afm/, turns it
// into dicts, dataclasses and pydantic models). Every call that generates releases the GIL;
// tools and streaming callbacks take it back while Python code runs. A GenerationError becomes
// afm._afm.GenerationError(kind, message, tool_name), which the package re-raises as its typed
// subclass.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "afm/afm.h"

namespace nb = nanobind;

namespace {

PyObject* g_generation_error = nullptr;  // afm._afm.GenerationError

using Json = nlohmann::ordered_json;

afm::GenerationOptions make_options(const std::string& sampling, int top_k, double top_p,
                                    uint64_t seed, std::optional<double> temperature,
                                    std::optional<int64_t> max_tokens, int prompt_lookup) {
  afm::GenerationOptions o;
  if (sampling == "greedy") {
    o.sampling = afm::SamplingMode::greedy();
  } else if (sampling == "top_k") {
    o.sampling = afm::SamplingMode::top_k_sampling(top_k, seed);
  } else if (sampling == "top_p") {
    o.sampling = afm::SamplingMode::top_p_sampling(top_p, seed);
  } else {
    throw std::invalid_argument("sampling must be 'greedy', 'top_k' or 'top_p', got '" + sampling + "'");
  }
  o.temperature = temperature;
  o.maximum_response_tokens = max_tokens;
  o.prompt_lookup = prompt_lookup;
  return o;
}

Json parse_json(const std::string& text, const char* what) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    throw std::invalid_argument(std::string(what) + " is not JSON: " + e.what());
  }
}

// A tool whose call runs a Python function: fn(arguments_json_text) -> str. The function is
// borrowed: the Python session object that owns the native session keeps it alive. Holding it
// here would hide the reference from Python's cycle collector (a tool that refers back to its
// session would never be freed).
class PyTool : public afm::Tool {
 public:
  PyTool(std::string name, std::string description, const std::string& schema, nb::handle fn)
      : name_(std::move(name)), description_(std::move(description)),
        schema_(parse_json(schema, "the tool's parameters schema")), fn_(fn) {}

  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  afm::GenerationSchema arguments_schema() const override { return afm::GenerationSchema(schema_, name_); }
  afm::ToolOutput call(const afm::GeneratedContent& arguments) override {
    nb::gil_scoped_acquire gil;
    try {
      return std::string(nb::str(fn_(arguments.json_string())).c_str());
    } catch (nb::python_error& e) {
      // Become a C++ exception here, with the GIL held: the framework reports it as the
      // tool's error (GenerationError tool_call_error naming the tool).
      throw std::runtime_error(e.what());
    }
  }

 private:
  std::string name_, description_;
  Json schema_;
  nb::handle fn_;
};

// (name, description, parameters schema JSON, function) tuples -> tools.
std::vector<std::shared_ptr<afm::Tool>> make_tools(const nb::list& specs) {
  std::vector<std::shared_ptr<afm::Tool>> tools;
  for (nb::handle spec : specs) {
    nb::tuple t = nb::cast<nb::tuple>(spec);
    if (t.size() != 4) throw std::invalid_argument("a tool is (name, description, schema, call)");
    tools.push_back(std::make_shared<PyTool>(nb::cast<std::string>(t[0]), nb::cast<std::string>(t[1]),
                                             nb::cast<std::string>(t[2]), t[3]));
  }
  return tools;
}

std::tuple<int64_t, int64_t, int64_t> usage_tuple(const afm::Usage& u) {
  return {u.prompt_tokens, u.prefilled_tokens, u.response_tokens};
}

const char* entry_kind(afm::TranscriptEntry::Kind k) {
  switch (k) {
    case afm::TranscriptEntry::Kind::kInstructions: return "instructions";
    case afm::TranscriptEntry::Kind::kPrompt: return "prompt";
    case afm::TranscriptEntry::Kind::kToolCalls: return "tool_calls";
    case afm::TranscriptEntry::Kind::kToolOutput: return "tool_output";
    case afm::TranscriptEntry::Kind::kResponse: return "response";
  }
  return "unknown";
}

std::string transcript_json(const afm::Transcript& transcript) {
  Json out = Json::array();
  for (const afm::TranscriptEntry& e : transcript) {
    Json j = {{"kind", entry_kind(e.kind)}, {"text", e.text}};
    if (!e.calls.empty()) {
      j["calls"] = Json::array();
      for (const auto& c : e.calls) j["calls"].push_back({{"name", c.name}, {"arguments", c.arguments}});
    }
    if (!e.tool_name.empty()) j["tool_name"] = e.tool_name;
    if (e.schema) j["schema"] = *e.schema;
    out.push_back(std::move(j));
  }
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

class Session {
 public:
  // tools: see make_tools; the caller keeps their functions alive as long as the session.
  Session(const afm::SystemLanguageModel& model, const nb::list& tools, const std::string& instructions)
      : session_(model, make_tools(tools), instructions) {}

  std::tuple<std::string, std::tuple<int64_t, int64_t, int64_t>> respond(
      const std::string& prompt, const afm::GenerationOptions& options) {
    nb::gil_scoped_release nogil;
    afm::Response<std::string> r = session_.respond(prompt, options);
    return {std::move(r.content), usage_tuple(r.usage)};
  }

  std::tuple<std::string, std::tuple<int64_t, int64_t, int64_t>> respond_schema(
      const std::string& prompt, const std::string& schema, const std::string& name,
      const afm::GenerationOptions& options, bool include_schema_in_prompt) {
    const afm::GenerationSchema s(parse_json(schema, "the schema"), name);
    nb::gil_scoped_release nogil;
    afm::Response<afm::GeneratedContent> r = session_.respond(prompt, s, options, include_schema_in_prompt);
    return {r.content.json_string(), usage_tuple(r.usage)};
  }

  // on_snapshot(text): the response so far, called as it grows.
  std::tuple<std::string, std::tuple<int64_t, int64_t, int64_t>> stream(
      const std::string& prompt, nb::callable on_snapshot, const afm::GenerationOptions& options) {
    nb::gil_scoped_release nogil;
    afm::Response<std::string> r = session_.stream_response(
        prompt, [&](const std::string& text) { call_back(on_snapshot, text, true); }, options);
    return {std::move(r.content), usage_tuple(r.usage)};
  }

  // on_snapshot(json_text, complete): the partial value so far (docs/framework.md).
  std::tuple<std::string, std::tuple<int64_t, int64_t, int64_t>> stream_schema(
      const std::string& prompt, const std::string& schema, const std::string& name,
      nb::callable on_snapshot, const afm::GenerationOptions& options, bool include_schema_in_prompt) {
    const afm::GenerationSchema s(parse_json(schema, "the schema"), name);
    nb::gil_scoped_release nogil;
    afm::Response<afm::GeneratedContent> r = session_.stream_response(
        prompt, s,
        [&](const afm::GeneratedContent& c) { call_back(on_snapshot, c.json_string(), c.is_complete()); },
        options, include_schema_in_prompt);
    return {r.content.json_string(), usage_tuple(r.usage)};
  }

  void prewarm(const std::string& prefix) {
    nb::gil_scoped_release nogil;
    session_.prewarm(prefix);
  }

  std::string transcript() const { return transcript_json(session_.transcript()); }
  bool is_responding() const { return session_.is_responding(); }

 private:
  // Runs a Python callback from the generating thread; an exception it raises stops the
  // generation and reaches the caller (as a RuntimeError with the callback's message).
  static void call_back(const nb::callable& fn, const std::string& text, bool complete) {
    nb::gil_scoped_acquire gil;
    try {
      fn(text, complete);
    } catch (nb::python_error& e) {
      throw std::runtime_error(std::string("the snapshot callback raised: ") + e.what());
    }
  }

  afm::LanguageModelSession session_;
};

}  // namespace

NB_MODULE(_afm, m) {
  m.doc() = "afm's C++ framework (use the afm package, not this module)";
  g_generation_error = PyErr_NewException("afm._afm.GenerationError", PyExc_RuntimeError, nullptr);
  m.attr("GenerationError") = nb::handle(g_generation_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const afm::GenerationError& e) {
      nb::object args = nb::make_tuple(afm::generation_error_kind_name(e.kind()), e.what(), e.tool_name());
      PyErr_SetObject(g_generation_error, args.ptr());
    }
  });
  m.def("version", &afm::version);

  nb::class_<afm::GenerationOptions>(m, "GenerationOptions");
  m.def("make_options", &make_options, nb::arg("sampling"), nb::arg("top_k"), nb::arg("top_p"),
        nb::arg("seed"), nb::arg("temperature").none(), nb::arg("max_tokens").none(),
        nb::arg("prompt_lookup"));

  nb::class_<afm::SystemLanguageModel>(m, "SystemLanguageModel")
      .def("__init__",
           [](afm::SystemLanguageModel* self, const std::string& path, int64_t context_size,
              int threads, const std::string& draft) {
             afm::ModelOptions o{context_size, threads, draft};
             nb::gil_scoped_release nogil;
             new (self) afm::SystemLanguageModel(path, o);
           },
           nb::arg("path"), nb::arg("context_size") = 0, nb::arg("threads") = 0,
           nb::arg("draft_model") = "")
      .def_static("default_model",
                  [](int64_t context_size, int threads) {
                    nb::gil_scoped_release nogil;
                    return afm::SystemLanguageModel::default_model({context_size, threads, ""});
                  },
                  nb::arg("context_size") = 0, nb::arg("threads") = 0)
      .def_static("with_adapter",
                  [](const afm::SystemLanguageModel& base, const std::string& path, float scale) {
                    nb::gil_scoped_release nogil;  // loading checks the base's SHA-256
                    return afm::SystemLanguageModel(base, path, scale);
                  },
                  nb::arg("base"), nb::arg("path"), nb::arg("scale") = 1.0f)
      .def_prop_ro("is_available", &afm::SystemLanguageModel::is_available)
      .def_prop_ro("unavailable_reason", [](const afm::SystemLanguageModel& s) { return s.availability().reason; })
      .def_prop_ro("context_size", &afm::SystemLanguageModel::context_size);

  nb::class_<Session>(m, "Session")
      .def(nb::init<const afm::SystemLanguageModel&, const nb::list&, const std::string&>(),
           nb::arg("model"), nb::arg("tools"), nb::arg("instructions"))
      .def("respond", &Session::respond)
      .def("respond_schema", &Session::respond_schema)
      .def("stream", &Session::stream)
      .def("stream_schema", &Session::stream_schema)
      .def("prewarm", &Session::prewarm)
      .def("transcript", &Session::transcript)
      .def_prop_ro("is_responding", &Session::is_responding);
}
