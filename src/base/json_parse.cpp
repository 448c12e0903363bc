// Linear-time ordered_json parsing through nlohmann's SAX interface (see json_parse.h).
#include "base/json_parse.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace afm {

namespace {

using Json = nlohmann::ordered_json;
// ordered_json's object type derives from this vector; appending to it directly skips the
// linear key search of its own insert (this parser finds duplicates with its own index).
using MemberVector = std::vector<Json::object_t::value_type>;

class LinearBuilder {
 public:
  explicit LinearBuilder(size_t max_depth) : max_depth_(max_depth) {}

  bool null() { return place(Json(nullptr)); }
  bool boolean(bool v) { return place(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return place(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return place(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return place(Json(v)); }
  bool string(std::string& v) { return place(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return false; }  // not produced by JSON text
  bool start_object(size_t) { return open(Json::object()); }
  bool start_array(size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    open_.back().key = std::move(k);
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    message_ = e.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& message() const { return message_; }
  Json take() { return std::move(root_); }

 private:
  struct Open {
    Json* container;
    std::unordered_map<std::string, size_t> index;  // objects: key -> member position
    std::string key;                                // objects: the key of the next value
  };

  bool open(Json&& empty) {
    if (open_.size() + 1 > max_depth_) {
      too_deep_ = true;
      return false;
    }
    Json* slot = insert(std::move(empty));
    open_.push_back({slot, {}, {}});
    return true;
  }

  bool close() {
    open_.pop_back();
    return true;
  }

  bool place(Json&& value) {
    insert(std::move(value));
    return true;
  }

  // Puts `value` where the parse is (root, array end, or the pending key) and returns it.
  Json* insert(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Open& top = open_.back();
    if (top.container->is_array()) {
      auto& array = top.container->get_ref<Json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    auto& members = static_cast<MemberVector&>(top.container->get_ref<Json::object_t&>());
    auto [at, added] = top.index.try_emplace(top.key, members.size());
    if (!added) {  // a repeated key: first position, last value (as nlohmann's own parser)
      members[at->second].second = std::move(value);
      return &members[at->second].second;
    }
    members.emplace_back(std::move(top.key), std::move(value));
    return &members.back().second;
  }

  size_t max_depth_;
  bool too_deep_ = false;
  std::string message_;
  Json root_;
  std::vector<Open> open_;  // containers being filled; a parent never grows while open
};

}  // namespace

ParsedJson parse_ordered_json(std::string_view text, size_t max_depth) {
  LinearBuilder builder(max_depth);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &builder);
  ParsedJson out;
  if (ok || builder.too_deep()) out.value = builder.take();
  if (ok) return out;
  out.status = builder.too_deep() ? JsonParseStatus::kTooDeep : JsonParseStatus::kSyntax;
  out.message = builder.too_deep() ? "nesting deeper than " + std::to_string(max_depth) + " levels"
                                   : builder.message();
  return out;
}

}  // namespace afm
