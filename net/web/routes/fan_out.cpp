#include "net/web/routes/fan_out.hpp"

namespace nf::net::web {

void fan_out::run(size_t n, size_t window, step_fn step, std::function<void()> finished) {
  if (n == 0) {
    finished();
    return;
  }
  auto f = std::make_shared<fan_out>(n, window, std::move(step), std::move(finished));
  f->launch();
}

void fan_out::launch() {
  for (;;) {
    size_t i;
    {
      std::lock_guard<std::mutex> guard{m_};
      if (in_flight_ >= window_ || started_ >= n_)
        return;
      i = started_++;
      ++in_flight_;
    }
    step_(i, [self = shared_from_this()] { self->one_done(); });
  }
}

void fan_out::one_done() {
  bool last;
  {
    std::lock_guard<std::mutex> guard{m_};
    --in_flight_;
    last = ++done_ == n_;
  }
  if (last)
    finished_();
  else
    launch();
}

} // namespace nf::net::web
