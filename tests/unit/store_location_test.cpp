// What a store location names (harness/store/location.cpp): a PostgreSQL
// server in either of libpq's forms or an SQLite file; its password masked in
// every form; and the values that are neither, refused with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "harness/store/store.h"

namespace twinbench::store {
namespace {

TEST(StoreLocation, BothLibpqFormsNameAServerAnythingElseAFile) {
  for (const char* server : {"postgresql://runner@db/tb", "postgres://db/tb", "host=db dbname=tb",
                             "  dbname = tb host=/run/postgresql", "service=fleet"})
    EXPECT_TRUE(is_server_location(server)) << server;
  for (const char* file : {"twinbench.db", "./host=db.db", "/data/runs.db", "runs 2024.db", ":memory:", "=x.db"})
    EXPECT_FALSE(is_server_location(file)) << file;
}

TEST(StoreLocation, PasswordsAreMaskedInEveryForm) {
  EXPECT_EQ(redact_location("postgresql://tb:s3cret@db:5432/tb?sslmode=require"),
            "postgresql://tb:***@db:5432/tb?sslmode=require");
  EXPECT_EQ(redact_location("postgresql://tb@db/tb?sslmode=require&password=s3cret"),
            "postgresql://tb@db/tb?sslmode=require&password=***");
  EXPECT_EQ(redact_location("host=db port=5432 user=tb password=s3cret dbname=tb"),
            "host=db port=5432 user=tb password=*** dbname=tb");
  EXPECT_EQ(redact_location("host=db password = 'it\\'s a secret' dbname=tb"), "host=db password = *** dbname=tb");
  EXPECT_EQ(redact_location("runs.db"), "runs.db");
  // A keyword libpq does not know may hold a secret too (a misspelt password).
  EXPECT_EQ(redact_location("host=db passwrd=s3cret dbname=tb"), "host=db passwrd=*** dbname=tb");
  EXPECT_EQ(redact_location("mysql://tb:s3cret@db/tb"), "mysql://tb:***@db/tb");
}

TEST(StoreLocation, ValuesThatNameNothingAreRefusedWithTheReason) {
  const auto refused = [](const std::string& location, const std::string& why) {
    try {
      check_location(location);
      ADD_FAILURE() << location << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << "the password was printed";
    }
  };
  refused("", "it is empty");
  refused("runs\n.db", "a control character");
  refused("mysql://tb:s3cret@db/tb", "only postgresql:// and postgres:// URLs name a store");
  refused(std::filesystem::temp_directory_path().string(), "it is a directory");
  refused("runs/", "it is a directory");
  refused("foo=bar.db password=s3cret", "invalid connection option \"foo\"");
  refused("foo=bar.db", "is written as ./NAME");
  refused("host=db passwrd=s3cret", "invalid connection option \"passwrd\"");
  for (const char* fine : {"twinbench.db", "./foo=bar.db", "postgresql://tb:s3cret@db/tb", "host=db dbname=tb",
                           "host=db password='a b' dbname=tb"})
    EXPECT_NO_THROW(check_location(fine)) << fine;
}

}  // namespace
}  // namespace twinbench::store
