// The optimizer base's state dict and its archive form (save/load), and the options' and states'
// fields: cold code, compiled for size (CMakeLists.txt), apart from the per-step part in
// optimizer.cpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "ember/factory.h"
#include "ember/optim/optimizer.h"
#include "ember/serialize/archive.h"

namespace ember::optim {

void OptimizerOptions::serialize(serialize::OutputArchive& archive) const {
  // fields() hands out pointers for reading and writing; here they are only read
  for (const OptimizerField& f : const_cast<OptimizerOptions*>(this)->fields())
    archive.write(f.name, jit::IValue(f.get()));
}
void OptimizerOptions::serialize(serialize::InputArchive& archive) {
  for (const OptimizerField& f : fields()) {
    jit::IValue v;
    if (archive.try_read(f.name, v)) f.set(v.toDouble());
  }
}

void OptimizerParamState::serialize(serialize::OutputArchive& archive) const {
  for (const StateField& f : const_cast<OptimizerParamState*>(this)->fields()) {
    if (f.count) {
      archive.write(f.name, jit::IValue(*f.count));
    } else if (f.number) {
      archive.write(f.name, jit::IValue(*f.number));
    } else if (f.list) {
      for (size_t k = 0; k < f.list->size(); ++k)
        archive.write(std::string(f.name) + "." + std::to_string(k), (*f.list)[k]);
    } else if (f.tensor->defined()) {
      archive.write(f.name, *f.tensor);
    }
  }
}
void OptimizerParamState::serialize(serialize::InputArchive& archive) {
  for (const StateField& f : fields()) {
    jit::IValue v;
    if (f.count) {
      if (archive.try_read(f.name, v)) *f.count = v.toInt();
    } else if (f.number) {
      if (archive.try_read(f.name, v)) *f.number = v.toDouble();
    } else if (f.list) {
      f.list->clear();
      for (size_t k = 0;; ++k) {
        Tensor t;
        if (!archive.try_read(std::string(f.name) + "." + std::to_string(k), t)) break;
        f.list->push_back(std::move(t));
      }
    } else {
      archive.try_read(f.name, *f.tensor);
    }
  }
}

// The state dict in an archive: tensors under "state.<index>.<field>", hyperparameters as numbers
// under "param_groups.<group>.<name>".
void Optimizer::save(serialize::OutputArchive& archive) const {
  const OptimizerStateDict dict = state_dict();
  for (const auto& item : dict.state) archive.write("state." + item.key(), item.value());
  for (size_t g = 0; g < dict.param_groups.size(); ++g)
    for (const auto& item : dict.param_groups[g])
      archive.write("param_groups." + std::to_string(g) + "." + item.key(), jit::IValue(item.value()));
}

namespace {
// Every tensor under `archive`, by its dotted name below it.
void collect_tensors(serialize::InputArchive& archive, const std::string& prefix,
                     OrderedDict<std::string, Tensor>& out) {
  for (const std::string& k : archive.keys()) {
    if (const Tensor* t = archive.find(k)) {
      out.insert(prefix + k, *t);
      continue;
    }
    serialize::InputArchive nested;
    if (archive.try_read(k, nested)) collect_tensors(nested, prefix + k + ".", out);
  }
}
}  // namespace

void Optimizer::load(serialize::InputArchive& archive) {
  OptimizerStateDict dict = state_dict();
  dict.state = OrderedDict<std::string, Tensor>("state");
  serialize::InputArchive state;
  if (archive.try_read("state", state)) collect_tensors(state, "", dict.state);
  serialize::InputArchive groups;
  EMBER_CHECK(archive.try_read("param_groups", groups), "Optimizer::load", "the archive holds no param_groups");
  for (size_t g = 0; g < dict.param_groups.size(); ++g) {
    serialize::InputArchive group;
    EMBER_CHECK(groups.try_read(std::to_string(g), group), "Optimizer::load", "the archive holds no param group ", g,
                " (the optimizer has ", dict.param_groups.size(), ")");
    for (auto& item : dict.param_groups[g]) {
      jit::IValue v;
      EMBER_CHECK(group.try_read(item.key(), v), "Optimizer::load", "param group ", g, " lacks '", item.key(), "'");
      item.value() = v.toDouble();
    }
  }
  load_state_dict(dict);
}

double OptimizerField::get() const {
  constexpr double none = std::numeric_limits<double>::quiet_NaN();
  if (number) return *number;
  if (flag) return *flag ? 1 : 0;
  if (integer) return static_cast<double>(*integer);
  if (optional_integer) return optional_integer->has_value() ? static_cast<double>(**optional_integer) : none;
  if (!choice->has_value()) return none;
  const auto it = std::find(choices.begin(), choices.end(), **choice);
  EMBER_CHECK(it != choices.end(), "state_dict", "'", name, "' is '", **choice, "', not one of its choices");
  return static_cast<double>(it - choices.begin());
}

void OptimizerField::set(double value) const {
  // A loaded state dict may hold anything: integers and choices must be whole numbers in range.
  const auto whole = [&](double lo, double hi) {
    EMBER_CHECK(value == std::floor(value) && value >= lo && value < hi, "load_state_dict", "'", name, "' is ", value,
                ", not a whole number in [", lo, ", ", hi, ")");
  };
  constexpr double int64_end = 9223372036854775808.0;  // 2^63
  if (number) {
    *number = value;
  } else if (flag) {
    *flag = value != 0;
  } else if (integer) {
    whole(-int64_end, int64_end);
    *integer = static_cast<int64_t>(value);
  } else if (optional_integer) {
    if (!std::isnan(value)) whole(-int64_end, int64_end);
    *optional_integer = std::isnan(value) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(value));
  } else {
    if (!std::isnan(value)) whole(0, static_cast<double>(choices.size()));
    *choice = std::isnan(value) ? std::nullopt : std::optional<std::string>(choices[static_cast<size_t>(value)]);
  }
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict dict;
  int64_t index = 0;
  for (const OptimizerParamGroup& g : param_groups_) {
    OrderedDict<std::string, double> hyper("hyperparameter");
    // fields() hands out pointers for load_state_dict; here they are only read
    for (const OptimizerField& f : const_cast<OptimizerOptions&>(g.options()).fields())
      hyper.insert(f.name, f.get());
    hyper.insert("params", static_cast<double>(g.params().size()));
    dict.param_groups.push_back(std::move(hyper));
    for (const Tensor& p : g.params()) {
      auto it = state_.find(p.unsafeGetTensorImpl());
      if (it != state_.end()) {
        for (const StateField& f : it->second->fields()) {
          const std::string key = std::to_string(index) + "." + f.name;
          if (f.count) {
            dict.state.insert(key, scalar_tensor(*f.count, TensorOptions().dtype(kLong)));
          } else if (f.number) {
            dict.state.insert(key, scalar_tensor(*f.number, TensorOptions().dtype(kDouble)));
          } else if (f.list) {
            for (size_t k = 0; k < f.list->size(); ++k) dict.state.insert(key + "." + std::to_string(k), (*f.list)[k].clone());
          } else if (f.tensor->defined()) {
            dict.state.insert(key, f.tensor->clone());
          }
        }
      }
      ++index;
    }
  }
  return dict;
}

void Optimizer::load_state_dict(const OptimizerStateDict& dict) {
  constexpr const char* op = "load_state_dict";
  EMBER_CHECK(dict.param_groups.size() == param_groups_.size(), op,
              "loaded state dict has a different number of parameter groups (", dict.param_groups.size(),
              ") than the optimizer (", param_groups_.size(), ")");
  for (size_t gi = 0; gi < param_groups_.size(); ++gi) {
    const OrderedDict<std::string, double>& hyper = dict.param_groups[gi];
    const double* n = hyper.find("params");
    EMBER_CHECK(n && static_cast<size_t>(*n) == param_groups_[gi].params().size(), op,
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group ", gi,
                " (", n ? *n : -1.0, " vs ", param_groups_[gi].params().size(), " parameters)");
    for (const OptimizerField& f : param_groups_[gi].options().fields()) {
      const double* v = hyper.find(f.name);
      EMBER_CHECK(v, op, "parameter group ", gi, " lacks the hyperparameter '", f.name, "'");
      EMBER_CHECK(!f.choice || std::isnan(*v) || (*v >= 0 && *v < static_cast<double>(f.choices.size())), op,
                  "parameter group ", gi, ": '", f.name, "' holds ", *v, ", not the index of one of its ",
                  f.choices.size(), " choices");
    }
  }
  // Build every new state first, so a bad entry leaves the optimizer as it was.
  StateMap fresh;
  size_t used = 0;
  int64_t index = 0;
  for (OptimizerParamGroup& g : param_groups_) {
    for (const Tensor& p : g.params()) {
      std::unique_ptr<OptimizerParamState> s = make_state(p, g.options());
      bool any = false;
      // a stored tensor in the parameter's dtype (and shape, unless the field takes any); one of
      // the parameter's shape is laid out as the parameter, as the optimizer makes its state (a
      // channels_last weight's Adam moments then keep it on the fused update)
      auto load_tensor = [&](const std::string& key, const Tensor& t, bool any_shape) {
        EMBER_CHECK(any_shape || t.sizes() == p.sizes(), op, "'", key, "' has shape ", t.sizes(),
                    " but its parameter has shape ", p.sizes());
        if (t.sizes() == p.sizes()) return empty_like(p).copy_(t);
        return t.to(p.dtype(), false, true).contiguous();
      };
      for (const StateField& f : s->fields()) {
        const std::string key = std::to_string(index) + "." + f.name;
        if (f.list) {
          f.list->clear();
          while (const Tensor* t = dict.state.find(key + "." + std::to_string(f.list->size()))) {
            f.list->push_back(load_tensor(key, *t, f.any_shape));
            any = true;
            ++used;
          }
          continue;
        }
        const Tensor* t = dict.state.find(key);
        if (!t) continue;
        any = true;
        ++used;
        if (f.count || f.number) {
          EMBER_CHECK(t->numel() == 1, op, "'", key, "' must hold one number, got shape ", t->sizes());
          if (f.count) {
            *f.count = t->item<int64_t>();
          } else {
            *f.number = t->item<double>();
          }
        } else {
          *f.tensor = load_tensor(key, *t, f.any_shape);
        }
      }
      if (any) fresh[p.unsafeGetTensorImpl()] = std::move(s);
      ++index;
    }
  }
  if (used != dict.state.size()) {
    for (const auto& item : dict.state) {
      const std::string& key = item.key();
      const size_t dot = key.find('.');
      bool known = false;
      if (dot != std::string::npos) {
        char* end = nullptr;
        const long long i = std::strtoll(key.c_str(), &end, 10);
        known = end == key.c_str() + dot && i >= 0 && i < index;
      }
      EMBER_CHECK(known, op, "unexpected key '", key, "' in the state dict");
    }
    EMBER_CHECK(false, op, "the state dict has entries this optimizer does not use");
  }
  for (size_t gi = 0; gi < param_groups_.size(); ++gi) {
    for (const OptimizerField& f : param_groups_[gi].options().fields()) f.set(dict.param_groups[gi].at(f.name));
  }
  state_ = std::move(fresh);
}

}  // namespace ember::optim
