// L-BFGS as libtorch's: the two-loop recursion over the stored curvature pairs gives the search
// direction, then either a fixed step of lr or a strong-Wolfe line search (bracketing, then zoom
// with safeguarded cubic interpolation, Nocedal & Wright's algorithms 3.5 and 3.6).
#include "ember/optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"

namespace ember::optim {

std::vector<OptimizerField> LBFGSOptions::fields() {
  return {{"lr", &lr_},
          {"max_iter", nullptr, nullptr, &max_iter_},
          {"max_eval", nullptr, nullptr, nullptr, &max_eval_},
          {"tolerance_grad", &tolerance_grad_},
          {"tolerance_change", &tolerance_change_},
          {"history_size", nullptr, nullptr, &history_size_},
          {"line_search_fn", nullptr, nullptr, nullptr, nullptr, &line_search_fn_, {"strong_wolfe"}}};
}

std::vector<StateField> LBFGSParamState::fields() {
  return {{"func_evals", nullptr, &func_evals_},
          {"n_iter", nullptr, &n_iter_},
          {"t", nullptr, nullptr, &t_},
          {"prev_loss", nullptr, nullptr, &prev_loss_},
          {"d", &d_, nullptr, nullptr, nullptr, true},
          {"H_diag", &H_diag_, nullptr, nullptr, nullptr, true},
          {"prev_flat_grad", &prev_flat_grad_, nullptr, nullptr, nullptr, true},
          {"old_dirs", nullptr, nullptr, nullptr, &old_dirs_, true},
          {"old_stps", nullptr, nullptr, nullptr, &old_stps_, true},
          {"ro", nullptr, nullptr, nullptr, &ro_, true}};
}

namespace {

constexpr const char* kOp = "LBFGS";

// The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
// [lo, hi] (the two points when no bounds are given); their midpoint when the cubic has no minimum.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  const auto [lo, hi] = bounds ? *bounds : std::pair{std::min(x1, x2), std::max(x1, x2)};
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2;
  const double d2 = std::sqrt(d2_square);
  const double at = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                             : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(at, lo), hi);
}

double dot_value(const Tensor& a, const Tensor& b) { return a.dot(b).item<double>(); }
double abs_max(const Tensor& t) { return t.abs().max().item<double>(); }

// One end of a bracket: step, loss, flat gradient and its slope along the direction.
struct Point {
  double t, f;
  Tensor g;
  double gtd;
};

struct LineSearchResult {
  double f;
  Tensor g;
  double t;
  int64_t evals;
};

// Strong-Wolfe line search from `start` (step 0) along d, first trying step t.
template <class Objective>
LineSearchResult strong_wolfe(const Objective& evaluate, double t, const Tensor& d, const Point& start,
                              double c1 = 1e-4, double c2 = 0.9, double tolerance_change = 1e-9,
                              int64_t max_ls = 25) {
  const double d_norm = abs_max(d);
  auto at = [&](double step) {
    auto [f, g] = evaluate(step);
    const double gtd = dot_value(g, d);
    return Point{step, f, std::move(g), gtd};
  };
  auto armijo_fails = [&](const Point& p) { return p.f > start.f + c1 * p.t * start.gtd; };
  auto curvature = [&](const Point& p) { return std::abs(p.gtd) <= -c2 * start.gtd; };

  Point prev{0, start.f, start.g.clone(), start.gtd};
  Point cur = at(t);
  int64_t evals = 1, ls_iter = 0;
  std::vector<Point> bracket;
  bool done = false;
  // Bracketing: grow the step until an interval holds a point satisfying the Wolfe conditions.
  while (ls_iter < max_ls) {
    if (armijo_fails(cur) || (ls_iter > 1 && cur.f >= prev.f) || (!curvature(cur) && cur.gtd >= 0)) {
      bracket = {prev, cur};
      break;
    }
    if (curvature(cur)) {
      bracket = {cur};
      done = true;
      break;
    }
    const double min_step = cur.t + 0.01 * (cur.t - prev.t), max_step = cur.t * 10;
    const double next = cubic_interpolate(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd, {{min_step, max_step}});
    prev = std::move(cur);
    cur = at(next);
    ++evals;
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {Point{0, start.f, start.g, start.gtd}, cur};

  // Zoom: shrink the bracket by safeguarded cubic interpolation.
  auto low_high = [&] { return bracket[0].f <= bracket.back().f ? std::pair{0, 1} : std::pair{1, 0}; };
  auto [low, high] = low_high();
  bool insufficient_progress = false;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change) break;
    double next = cubic_interpolate(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f,
                                    bracket[1].gtd);
    // A step too close to an end makes little progress: after two such, move it a tenth inside.
    const double hi = std::max(bracket[0].t, bracket[1].t), lo = std::min(bracket[0].t, bracket[1].t);
    const double eps = 0.1 * (hi - lo);
    if (std::min(hi - next, next - lo) < eps) {
      if (insufficient_progress || next >= hi || next <= lo) {
        next = std::abs(next - hi) < std::abs(next - lo) ? hi - eps : lo + eps;
        insufficient_progress = false;
      } else {
        insufficient_progress = true;
      }
    } else {
      insufficient_progress = false;
    }
    Point p = at(next);
    ++evals;
    ++ls_iter;
    if (armijo_fails(p) || p.f >= bracket[low].f) {
      bracket[high] = std::move(p);
      std::tie(low, high) = low_high();
    } else {
      if (curvature(p)) {
        done = true;
      } else if (p.gtd * (bracket[high].t - bracket[low].t) >= 0) {
        bracket[high] = bracket[low];
      }
      bracket[low] = std::move(p);
    }
  }
  Point& best = bracket[low];
  return {best.f, std::move(best.g), best.t, evals};
}

}  // namespace

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<LBFGSOptions>(defaults)) {
  EMBER_CHECK(param_groups_.size() == 1, kOp, "LBFGS doesn't support per-parameter options (parameter groups)");
  if (!defaults.max_eval()) {
    const int64_t max_eval = defaults.max_iter() * 5 / 4;
    static_cast<LBFGSOptions&>(param_groups_[0].options()).max_eval(max_eval);
    static_cast<LBFGSOptions&>(*defaults_).max_eval(max_eval);
  }
}

std::unique_ptr<OptimizerParamState> LBFGS::make_state(const Tensor&, const OptimizerOptions&) const {
  return std::make_unique<LBFGSParamState>();
}

int64_t LBFGS::numel() const {
  int64_t n = 0;
  for (const Tensor& p : param_groups_[0].params()) n += p.numel();
  return n;
}

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups_[0].params())
    views.push_back(p.grad().defined() ? p.grad().reshape({-1}) : zeros({p.numel()}, p.options()));
  return cat(views, 0);
}

void LBFGS::add_grad(double step_size, const Tensor& update) {
  int64_t offset = 0;
  for (Tensor& p : param_groups_[0].params()) {
    const int64_t n = p.numel();
    p.add_(update.narrow(0, offset, n).view_as(p), step_size);
    offset += n;
  }
}

std::vector<Tensor> LBFGS::clone_params() const {
  std::vector<Tensor> out;
  for (const Tensor& p : param_groups_[0].params()) out.push_back(p.clone(MemoryFormat::Contiguous));
  return out;
}

void LBFGS::set_params(const std::vector<Tensor>& values) {
  auto& params = param_groups_[0].params();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(values[i]);
}

std::pair<double, Tensor> LBFGS::directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x,
                                                      double t, const Tensor& d) {
  add_grad(t, d);
  const double loss = evaluate(closure).item<double>();
  Tensor flat_grad = gather_flat_grad();
  set_params(x);
  return {loss, std::move(flat_grad)};
}

Tensor LBFGS::step(LossClosure closure) {
  const dispatch::ObservedRange range("Optimizer.step#LBFGS.step", RangeKind::UserScope);  // PyTorch's name
  EMBER_CHECK(!dispatch::capturing(), "LBFGS", "cannot be captured in a graph: its line search reads values on the host (SGD and fused Adam/AdamW can)");
  EMBER_CHECK(closure != nullptr, kOp, "LBFGS::step needs a closure that recomputes the loss and its gradients");
  NoGradGuard no_grad;
  auto& o = static_cast<LBFGSOptions&>(param_groups_[0].options());
  const int64_t max_eval = o.max_eval().value_or(o.max_iter() * 5 / 4);
  EMBER_CHECK(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe", kOp,
              "only 'strong_wolfe' is supported as line_search_fn, got '", *o.line_search_fn(), "'");
  EMBER_CHECK(!param_groups_[0].params().empty(), kOp, "the optimizer has no parameters");
  std::unique_ptr<OptimizerParamState>& slot = state_[param_groups_[0].params()[0].unsafeGetTensorImpl()];
  if (!slot) slot = make_state(param_groups_[0].params()[0], o);
  auto& state = static_cast<LBFGSParamState&>(*slot);

  const Tensor orig_loss = evaluate(closure);
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  state.func_evals(state.func_evals() + 1);
  Tensor flat_grad = gather_flat_grad();
  if (abs_max(flat_grad) <= o.tolerance_grad()) return orig_loss;

  Tensor d = state.d(), H_diag = state.H_diag(), prev_flat_grad = state.prev_flat_grad();
  double t = state.t(), prev_loss = state.prev_loss();
  std::deque<Tensor>& old_dirs = state.old_dirs();
  std::deque<Tensor>& old_stps = state.old_stps();
  std::deque<Tensor>& ro = state.ro();

  for (int64_t n_iter = 1; n_iter <= o.max_iter(); ++n_iter) {
    state.n_iter(state.n_iter() + 1);
    if (state.n_iter() == 1) {  // steepest descent, no curvature known yet
      d = flat_grad.neg();
      H_diag = scalar_tensor(1, TensorOptions().dtype(kLong));
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
    } else {
      // the newest curvature pair, kept when it is positive (the update stays positive definite)
      const Tensor y = flat_grad.sub(prev_flat_grad);
      const Tensor s = d.mul(t);
      const Tensor ys = y.dot(s);
      if (ys.item<double>() > 1e-10) {
        if (static_cast<int64_t>(old_dirs.size()) == o.history_size()) {
          old_dirs.pop_front();
          old_stps.pop_front();
          ro.pop_front();
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(ys.reciprocal());
        H_diag = ys / y.dot(y);
      }
      // two-loop recursion: d = -H g with H the L-BFGS approximation of the inverse Hessian
      const int64_t num_old = static_cast<int64_t>(old_dirs.size());
      if (!state.al()) state.al(std::vector<Tensor>(static_cast<size_t>(o.history_size())));
      std::vector<Tensor>& al = *state.al();
      Tensor q = flat_grad.neg();
      for (int64_t i = num_old - 1; i >= 0; --i) {
        al[i] = old_stps[i].dot(q) * ro[i];
        q.add_(old_dirs[i], -al[i].item<double>());
      }
      d = q.mul(H_diag);
      for (int64_t i = 0; i < num_old; ++i) {
        const Tensor be_i = old_dirs[i].dot(d) * ro[i];
        d.add_(old_stps[i], (al[i] - be_i).item<double>());
      }
    }
    if (!prev_flat_grad.defined()) {
      prev_flat_grad = flat_grad.clone(MemoryFormat::Contiguous);
    } else {
      prev_flat_grad.copy_(flat_grad);
    }
    prev_loss = loss;
    // the first step is scaled to the gradient, later ones take lr
    t = state.n_iter() == 1 ? std::min(1., 1. / flat_grad.abs().sum().item<double>()) * o.lr() : o.lr();
    const double gtd = dot_value(flat_grad, d);
    if (gtd > -o.tolerance_change()) break;  // not a descent direction

    int64_t ls_func_evals = 0;
    bool opt_cond = false;
    if (o.line_search_fn()) {
      const std::vector<Tensor> x_init = clone_params();
      auto objective = [&](double step) { return directional_evaluate(closure, x_init, step, d); };
      LineSearchResult r = strong_wolfe(objective, t, d, {0, loss, flat_grad, gtd});
      loss = r.f;
      flat_grad = std::move(r.g);
      t = r.t;
      ls_func_evals = r.evals;
      add_grad(t, d);
      opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
    } else {
      add_grad(t, d);
      if (n_iter != o.max_iter()) {
        loss = evaluate(closure).item<double>();
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    state.func_evals(state.func_evals() + ls_func_evals);

    if (n_iter == o.max_iter() || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d.mul(t)) <= o.tolerance_change()) break;  // the step barely moves
    if (std::abs(loss - prev_loss) < o.tolerance_change()) break;
  }
  state.d(d);
  state.t(t);
  state.H_diag(H_diag);
  state.prev_flat_grad(prev_flat_grad);
  state.prev_loss(prev_loss);
  return orig_loss;
}

}  // namespace ember::optim
