// EXPECT_ERROR(statement, "piece", ...): the statement throws ember::Error whose message
// contains every piece.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "ember/error.h"

#define EXPECT_ERROR(stmt, ...)                                                               \
  do {                                                                                        \
    try {                                                                                     \
      stmt;                                                                                   \
      ADD_FAILURE() << "no error from " #stmt;                                                \
    } catch (const ::ember::Error& e) {                                                       \
      const std::string msg = e.what();                                                       \
      for (const char* piece : {__VA_ARGS__})                                                 \
        EXPECT_NE(msg.find(piece), std::string::npos) << "'" << piece << "' not in: " << msg; \
    }                                                                                         \
  } while (0)
