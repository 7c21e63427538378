// FunctionRef: a non-owning reference to a callable, for a call that is done with it before it
// returns (ThreadPool::ParallelFor). Unlike std::function it never allocates: a decode step runs
// hundreds of parallel loops, and their lambdas capture more than std::function keeps inline.
#pragma once

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

namespace ds {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
    requires(!std::same_as<std::remove_cvref_t<F>, FunctionRef> &&
             std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f)  // implicit, as std::function's: callers pass lambdas
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* callable, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(callable))(
              std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*call_)(void*, Args...);
};

}  // namespace ds
