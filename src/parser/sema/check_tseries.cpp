// tseries(n, interval, intervals[, "avg"|"max"|"min"|"sum"]): a time series, bpftrace's
// aggregation that keeps one value per interval for the last `intervals` intervals. Lowered by
// codegen/lower_tseries.cpp, printed by runtime/output/tseries.cpp.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

Type TypeChecker::check_tseries(const Call &call) {
  Type arg = check_expr(*call.args[0]);
  bool ok = expect_int(*call.args[0], arg, "tseries()'s value");
  for (size_t i = 1; i < call.args.size(); i++)
    check_expr(*call.args[i]);
  auto interval = const_int(*call.args[1]);
  if (!interval || *interval < 1) {
    diags_.error(call.args[1]->range,
                 "tseries()'s interval must be a positive integer literal (nanoseconds, or a "
                 "duration such as 100ms)");
    ok = false;
  }
  auto intervals = const_int(*call.args[2]);
  if (!intervals || *intervals < 1 || *intervals >= 1000000) {
    diags_.error(call.args[2]->range,
                 "tseries()'s number of intervals must be an integer literal from 1 to 999999");
    ok = false;
  }
  TSeriesAgg agg = TSeriesAgg::Last;
  if (call.args.size() == 4) {
    auto *name = dyn_cast<StrLit>(call.args[3]);
    if (name && name->value == "avg")
      agg = TSeriesAgg::Avg;
    else if (name && name->value == "max")
      agg = TSeriesAgg::Max;
    else if (name && name->value == "min")
      agg = TSeriesAgg::Min;
    else if (name && name->value == "sum")
      agg = TSeriesAgg::Sum;
    else {
      diags_.error(call.args[3]->range,
                   "tseries()'s aggregation must be \"avg\", \"max\", \"min\" or \"sum\"");
      ok = false;
    }
  }
  if (!ok || arg.is_none())
    return Type::none();
  return Type::tseries(arg.is_signed, static_cast<uint64_t>(*interval),
                       static_cast<uint32_t>(*intervals), agg);
}

}  // namespace rbt::sema
