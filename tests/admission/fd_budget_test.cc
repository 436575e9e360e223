#include <catch2/catch.hpp>

#include "atraced/admission/fd_budget.h"

using namespace atraced;

TEST_CASE("the descriptor plan keeps a reserve and bounds each uid", "[fds]") {
  auto p = FdBudget::MakePlan(1024, 25, 256);
  CHECK(p.reserve == 320);
  CHECK(p.budget == 704);
  CHECK(p.per_uid == 176);
  auto big = FdBudget::MakePlan(65536, 25, 256);
  CHECK(big.budget == 65216);
  CHECK(big.per_uid == 16304);
  auto tiny = FdBudget::MakePlan(40, 25, 256);  // three quarters reserved
  CHECK(tiny.reserve == 30);
  CHECK(tiny.budget == 10);
  CHECK(tiny.per_uid == 2);
  CHECK(FdBudget::MakePlan(4, 1, 256).per_uid == 1);  // never zero
}

TEST_CASE("charges are bounded per uid and in total, and released", "[fds]") {
  FdBudget b({100, 90, 10, 4});
  FdBudget::Verdict v;
  std::vector<FdCharge> a;
  for (int i = 0; i < 4; ++i) {
    a.push_back(FdCharge::Take(&b, 1000, &v));
    CHECK(v == FdBudget::Verdict::kOk);
  }
  FdCharge over = FdCharge::Take(&b, 1000, &v);
  CHECK(v == FdBudget::Verdict::kUidShare);
  CHECK(b.Describe(v, 1000).find("uid 1000 holds 4") != std::string::npos);
  std::vector<FdCharge> others;
  for (uint32_t uid = 1; uid <= 6; ++uid) others.push_back(FdCharge::Take(&b, uid, &v));
  CHECK(b.total() == 10);
  FdCharge late = FdCharge::Take(&b, 7, &v);
  CHECK(v == FdBudget::Verdict::kExhausted);
  a.pop_back();  // released by destruction
  CHECK(b.held(1000) == 3);
  FdCharge moved = FdCharge::Take(&b, 7, &v);
  CHECK(v == FdBudget::Verdict::kOk);
  FdCharge target = std::move(moved);
  target.Reset();
  CHECK(b.held(7) == 0);
  CHECK(b.total() == 9);
  FdCharge none = FdCharge::Take(nullptr, 1, &v);  // no budget: always ok
  CHECK(v == FdBudget::Verdict::kOk);
}
