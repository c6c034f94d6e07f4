# A toy web app for rlabel/rpath (tests/runtime/rframe.test, the README's example): a request
# loop dispatches to controller actions, as Rails does, and each action builds strings through
# a shared helper. Per request: OrdersController#index makes 300 strings (rb_str_new), #show
# 100, UsersController#show 50. Two actions are named `show`: their files tell them apart.
# ruby endpoints.rb [REQUESTS per route, default 20]
require_relative 'orders_controller'
require_relative 'users_controller'

# One rb_str_new per row: the interpolation makes a new String (from row 10 on: Ruby 3.1 turns
# the digits 0 to 9 into Strings without rb_str_new).
def render_rows(n)
  rows = []
  i = 10
  while i < n + 10
    rows << "row #{i}"
    i += 1
  end
  rows
end

ROUTES = [[OrdersController, :index], [OrdersController, :show], [UsersController, :show]].freeze

def dispatch(controller, action) = controller.new.public_send(action)

def serve(requests)
  requests.times do
    ROUTES.each { |controller, action| dispatch(controller, action) }
  end
end

# rbt learns about a process by inspecting it once it has seen its first events (issue 11 §1
# will make that immediate): give it a moment before the first request.
sleep 0.3
serve(Integer(ARGV[0] || 20))
