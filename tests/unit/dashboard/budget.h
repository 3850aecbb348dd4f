#pragma once

#include <QtGlobal>

// Time budgets (CPU milliseconds of the GUI thread) are goals measured by the benchmark label
// (ctest -L benchmark, RT_ASSERT_BUDGETS=1), not gates of CI: on a busy shared machine a budget
// says more about the neighbours than about the dashboard. Without the variable the tests check
// behaviour only and report the figures.
namespace rt::dashboard::testing {

inline bool budgetsAsserted()
{
    return qEnvironmentVariableIsSet("RT_ASSERT_BUDGETS");
}

} // namespace rt::dashboard::testing
