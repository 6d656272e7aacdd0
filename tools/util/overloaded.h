#ifndef FLEETPLAN_TOOLS_UTIL_OVERLOADED_H_
#define FLEETPLAN_TOOLS_UTIL_OVERLOADED_H_

namespace fleetplan {

// For std::visit: one lambda per alternative of a variant,
//   std::visit(Overloaded{[](const A& a) {...}, [](const B& b) {...}}, v);
template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_OVERLOADED_H_
