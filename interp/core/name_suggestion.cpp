// Name suggestions for NameError and AttributeError (name_suggestion.h).
#include "interp/core/name_suggestion.h"

#include <algorithm>
#include <cctype>

#include "interp/core/interp.h"
#include "interp/core/object.h"

namespace msl {

namespace {

constexpr size_t kMaxCandidates = 750;
constexpr size_t kMaxNameSize = 40;
constexpr size_t kMoveCost = 2;
constexpr size_t kCaseCost = 1;

// Edit distance with case changes at kCaseCost, other edits at kMoveCost;
// anything above `limit` is reported as limit + 1.
size_t distance(std::string_view a, std::string_view b, size_t limit) {
  if (a == b) return 0;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j * kMoveCost;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i * kMoveCost;
    size_t best = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = a[i - 1] == b[j - 1] ? 0
                          : std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                  std::tolower(static_cast<unsigned char>(b[j - 1]))
                              ? kCaseCost
                              : kMoveCost;
      size_t next = std::min({diagonal + substitute, row[j] + kMoveCost, row[j - 1] + kMoveCost});
      diagonal = row[j];
      row[j] = next;
      best = std::min(best, next);
    }
    if (best > limit) return limit + 1;
  }
  return row[b.size()];
}

void add_class_names(Class* c, std::vector<std::string>& out) {
  for (; c; c = c->base.get())
    for (auto& [k, v] : c->dict.entries()) out.push_back(k->s);
}

void add_module_names(Module* m, std::vector<std::string>& out) {
  for (GlobalSlot* s : m->order)
    if (!s->value.is_undef()) out.push_back(s->name->s);
}

}  // namespace

std::string closest_name(std::string_view wrong, const std::vector<std::string>& candidates) {
  if (wrong.size() > kMaxNameSize || candidates.size() > kMaxCandidates) return "";
  std::string best;
  size_t best_cost = SIZE_MAX;
  for (const std::string& c : candidates) {
    if (c == wrong || c.size() > kMaxNameSize) continue;
    size_t limit = (wrong.size() + c.size() + 3) * kMoveCost / 6;
    if (best_cost != SIZE_MAX) limit = std::min(limit, best_cost - 1);
    size_t cost = distance(wrong, c, limit);
    if (cost > limit) continue;
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

std::vector<std::string> names_of(Interp& I, const Value& obj) {
  std::vector<std::string> names;
  if (obj.is(Kind::Module)) {
    add_module_names(obj.as<Module>(), names);
  } else if (obj.is(Kind::Class)) {
    add_class_names(obj.as<Class>(), names);
  } else {
    if (obj.is(Kind::Instance) || obj.is(Kind::Exception))
      for (auto& [k, val] : obj.as<Instance>()->attrs.entries()) names.push_back(k->s);
    add_class_names(I.cls_of(obj), names);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string suggestion_suffix(Interp& I, const Value& exc) {
  if (!exc.is(Kind::Exception)) return "";
  ExceptionObj* x = exc.as<ExceptionObj>();
  if (!x->suggest_for) return "";
  std::vector<std::string> names = names_of(I, x->suggest_in);
  if (x->suggest_in.is(Kind::Module)) {
    // A name is looked up in its module, then in the builtins.
    add_module_names(I.builtins_module().get(), names);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  std::string best = closest_name(x->suggest_for->s, names);
  return best.empty() ? "" : ". Did you mean: '" + best + "'?";
}

}  // namespace msl
