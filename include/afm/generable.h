// Generable types: C++ structs and enums the model generates directly (Swift: @Generable).
//
//   struct Person { std::string name; int age; std::vector<std::string> tags; };
//   AFM_GENERABLE(Person, "A person mentioned in the text",
//     AFM_FIELD(name, "Full name"),
//     AFM_FIELD(age, "Age in years", afm::guide::range(0, 150)),
//     AFM_FIELD(tags, "Short labels", afm::guide::max_count(3)));
//
//   enum class Mood { happy, sad };
//   AFM_GENERABLE_ENUM(Mood, "How the writer feels", happy, sad);
//
// Use the macros at global namespace scope, after the type is complete. Properties are
// generated in the order the AFM_FIELDs list them; every field must be listed once.
// Field types: std::string, bool, integers, floating point, Generable structs and enums,
// std::vector<T> and std::optional<T> of those (an optional field may be left out).
// A Generable struct must be default-constructible (partial snapshots start from T{}).
// Integers are bounded by their type's range in the schema, so a parsed value always fits.
//
// Errors: impossible guides throw GenerationError(kUnsupportedGuide) the first time the
// schema is built (generation_schema<T>()); a value that does not fit T when parsing throws
// GenerationError(kDecodingFailure) naming the property.
#pragma once

#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "afm/errors.h"
#include "afm/generated_content.h"
#include "afm/generation_schema.h"

namespace afm {

// Specialised by AFM_GENERABLE (structs: name, description, fields()) and AFM_GENERABLE_ENUM
// (enums: name, description, cases).
template <class T>
struct Generable;

template <class T>
concept GenerableStruct = requires { Generable<T>::fields(); };
template <class T>
concept GenerableEnum = requires { Generable<T>::cases; };

// One field of a Generable struct.
template <class C, class M>
struct Field {
  M C::*member;
  const char* name;
  const char* description;
  std::vector<Guide> guides;
};

template <class C, class M, class... G>
Field<C, M> field(M C::*member, const char* name, const char* description, G... guides) {
  return Field<C, M>{member, name, description, std::vector<Guide>{guides...}};
}

namespace detail {

using Json = nlohmann::ordered_json;

template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

// Pairs each enumerator with its name, read from the comma-separated macro argument text.
template <class E, size_t N>
constexpr std::array<std::pair<E, std::string_view>, N> enum_cases(const std::array<E, N>& values,
                                                                   std::string_view text) {
  std::array<std::pair<E, std::string_view>, N> out{};
  for (size_t i = 0; i < N; ++i) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out[i] = {values[i], item};
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

[[noreturn]] void decoding_failure(const std::string& where, const std::string& why);
void guard_schema_depth(int depth, const char* type_name);

template <class T> Json value_schema(const std::vector<Guide>& guides, const std::string& where, int depth);
template <class T> void decode(const Json& j, T& out, const std::string& where, bool partial);

template <class T>
Json struct_schema(int depth) {
  guard_schema_depth(depth, Generable<T>::name);
  Json properties = Json::object();
  Json required = Json::array();
  std::apply([&](const auto&... f) {
    ((properties[f.name] = [&] {
        using M = std::remove_cvref_t<decltype(std::declval<T>().*(f.member))>;
        Json s = value_schema<M>(f.guides, std::string(Generable<T>::name) + "." + f.name, depth + 1);
        if (f.description && *f.description) s["description"] = f.description;
        if constexpr (!is_optional<M>::value) required.push_back(f.name);
        return s;
      }()), ...);
  }, Generable<T>::fields());
  Json out = {{"type", "object"}};
  if (*Generable<T>::description) out["description"] = Generable<T>::description;
  out["properties"] = std::move(properties);
  out["required"] = std::move(required);
  out["additionalProperties"] = false;
  return out;
}

template <class T>
Json value_schema(const std::vector<Guide>& guides, const std::string& where, int depth) {
  if constexpr (is_optional<T>::value) {
    return value_schema<typename T::value_type>(guides, where, depth);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return apply_guides(Json{{"type", "string"}}, ValueType::kString, guides, where);
  } else if constexpr (std::is_same_v<T, bool>) {
    return apply_guides(Json{{"type", "boolean"}}, ValueType::kBoolean, guides, where);
  } else if constexpr (std::is_integral_v<T>) {
    Json s = {{"type", "integer"},
              {"minimum", std::numeric_limits<T>::min()},
              {"maximum", std::numeric_limits<T>::max()}};
    return apply_guides(std::move(s), ValueType::kInteger, guides, where);
  } else if constexpr (std::is_floating_point_v<T>) {
    return apply_guides(Json{{"type", "number"}}, ValueType::kNumber, guides, where);
  } else if constexpr (is_vector<T>::value) {
    Json s = {{"type", "array"}, {"items", value_schema<typename T::value_type>({}, where + "[]", depth)}};
    return apply_guides(std::move(s), ValueType::kArray, guides, where);
  } else if constexpr (GenerableEnum<T>) {
    Json names = Json::array();
    for (const auto& c : Generable<T>::cases) names.push_back(std::string(c.second));
    Json s = {{"type", "string"}, {"enum", names}};
    return apply_guides(std::move(s), ValueType::kString, guides, where);
  } else if constexpr (GenerableStruct<T>) {
    return apply_guides(struct_schema<T>(depth), ValueType::kObject, guides, where);
  } else {
    static_assert(sizeof(T) == 0, "this field type is not Generable");
  }
}

template <class T>
void decode_struct(const Json& j, T& out, const std::string& where, bool partial) {
  if (!j.is_object()) {
    if (partial) return;
    decoding_failure(where, "expected an object");
  }
  std::apply([&](const auto&... f) {
    ((j.contains(f.name)
          ? decode(j[f.name], out.*(f.member), where + "." + f.name, partial)
          : void()), ...);
  }, Generable<T>::fields());
}

template <class T>
void decode(const Json& j, T& out, const std::string& where, bool partial) {
  auto fail = [&](const char* why) {
    if (!partial) decoding_failure(where, why);
  };
  if constexpr (is_optional<T>::value) {
    if (j.is_null()) return void(out.reset());
    typename T::value_type v{};
    decode(j, v, where, partial);
    out = std::move(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    j.is_string() ? void(out = j.get<std::string>()) : fail("expected a string");
  } else if constexpr (std::is_same_v<T, bool>) {
    j.is_boolean() ? void(out = j.get<bool>()) : fail("expected true or false");
  } else if constexpr (std::is_integral_v<T>) {
    if (j.is_number_integer() && std::in_range<T>(j.is_number_unsigned() ? 0 : j.get<int64_t>()) &&
        (!j.is_number_unsigned() || std::in_range<T>(j.get<uint64_t>()))) {
      out = j.is_number_unsigned() ? static_cast<T>(j.get<uint64_t>()) : static_cast<T>(j.get<int64_t>());
    } else {
      fail("expected an integer in the type's range");
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    j.is_number() ? void(out = j.get<T>()) : fail("expected a number");
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) return fail("expected an array");
    out.clear();
    for (const Json& e : j) {
      typename T::value_type v{};
      decode(e, v, where + "[]", partial);
      out.push_back(std::move(v));
    }
  } else if constexpr (GenerableEnum<T>) {
    for (const auto& c : Generable<T>::cases) {
      if (j.is_string() && j.get<std::string>() == c.second) return void(out = c.first);
    }
    fail("not one of the enumeration's cases");
  } else if constexpr (GenerableStruct<T>) {
    decode_struct(j, out, where, partial);
  }
}

}  // namespace detail

// The schema of a Generable type, built (and its guides checked) on every call; cheap enough
// for per-request use, and sessions cache the compiled grammar by schema text.
template <class T>
  requires GenerableStruct<T> || GenerableEnum<T>
GenerationSchema generation_schema() {
  return GenerationSchema(detail::value_schema<T>({}, Generable<T>::name, 0), Generable<T>::name,
                          Generable<T>::description);
}

// A complete value from generated content; GenerationError(kDecodingFailure) when it does not
// fit T.
template <class T>
T from_generated_content(const GeneratedContent& content) {
  T out{};
  detail::decode(content.json(), out, Generable<T>::name, /*partial=*/false);
  return out;
}

// A streaming snapshot of T: the fields generated so far (the last string may be unfinished),
// the others default-initialised; has(name) says which are present (Swift: PartiallyGenerated).
template <class T>
struct PartiallyGenerated {
  T value{};
  GeneratedContent content;
  bool is_complete() const { return content.is_complete(); }
  bool has(const std::string& field) const {
    return content.json().is_object() && content.json().contains(field);
  }
};

template <class T>
PartiallyGenerated<T> partially_generated(const GeneratedContent& content) {
  PartiallyGenerated<T> out;
  out.content = content;
  detail::decode(content.json(), out.value, Generable<T>::name, /*partial=*/true);
  return out;
}

}  // namespace afm

// Declares a Generable struct; each field argument is AFM_FIELD(member, "description", guides...).
#define AFM_GENERABLE(Type, Description, ...)                          \
  template <>                                                          \
  struct afm::Generable<Type> {                                        \
    using Self = Type;                                                 \
    static constexpr const char* name = #Type;                         \
    static constexpr const char* description = Description;            \
    static auto fields() { return std::make_tuple(__VA_ARGS__); }      \
  }

#define AFM_FIELD(member, ...) ::afm::field(&Self::member, #member, __VA_ARGS__)

// Declares a Generable enum: AFM_GENERABLE_ENUM(Mood, "description", happy, sad, ...).
// The model generates the case names as strings.
// (The case list is read twice: as enumerators, brought into scope by `using enum`, and as
// the text of the macro arguments, which gives their names.)
#define AFM_GENERABLE_ENUM(Type, Description, ...)                                        \
  template <>                                                                             \
  struct afm::Generable<Type> {                                                           \
    using enum Type;                                                                      \
    static constexpr const char* name = #Type;                                            \
    static constexpr const char* description = Description;                               \
    static constexpr std::array case_values{__VA_ARGS__};                                 \
    static constexpr auto cases = ::afm::detail::enum_cases(case_values, #__VA_ARGS__);   \
  }
