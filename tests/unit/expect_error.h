// Error expectations shared by the unit tests: the call throws ember::Error and the message
// contains every given piece (op name, PyTorch's wording, shapes).
#pragma once
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "ember/error.h"

template <class F>
void expect_error(F&& f, std::initializer_list<std::string> pieces, const char* what = "the call") {
  try {
    f();
    ADD_FAILURE() << "no error from " << what << "; expected one containing \"" << *pieces.begin() << "\"";
  } catch (const ::ember::Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : pieces) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

template <class F>
void expect_error(F&& f, const std::string& piece) {
  expect_error(std::forward<F>(f), {piece});
}

// The message of the ember::Error that f throws ("" and a test failure if it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ::ember::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ember::Error thrown";
  return "";
}

// EXPECT_ERROR(statement, "piece", ...)
#define EXPECT_ERROR(stmt, ...) expect_error([&] { stmt; }, {__VA_ARGS__}, #stmt)
